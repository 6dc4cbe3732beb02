package main

// The scheduler hooks (overlay/hooks) and the wrappers of the scheduler's queue pop and
// Scheduler.FailureHandler; what differs per release is in release_*.go and next_*.go.

import (
	"context"
	"time"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

func setHooks(env oracleEnv, serial bool, r *serialRun) {
	setTieHook(env.lowestName)
	defaultpreemption.OracleLowestName = env.lowestName
	preemption.OracleLowestName = env.lowestName
	volumebinding.OracleSortPVs = env.lowestName
	if serial {
		volumebinding.OraclePollInterval = time.Millisecond
		preemption.OracleAsync = func(f func()) { r.asyncPreemptions = append(r.asyncPreemptions, f) }
		preemption.OracleSettle = func() { r.st.settle() }
	}
}

// wrapScheduler records each popped pod (named if a cycle does not settle) and each failure's
// kind: a failure without rejecting plugins puts the pod in the error backoff heap.
func wrapScheduler(r *serialRun) {
	wrapNext(r)
	failure := r.sched.FailureHandler
	r.sched.FailureHandler = func(ctx context.Context, f framework.Framework, pi *framework.QueuedPodInfo, status *fwk.Status, ni *nominatingInfo, start time.Time) {
		failure(ctx, f, pi, status, ni, start)
		key := podKey(pi.Pod)
		q := queuedAfterFailure(r, pi)
		if q != nil && q.UnschedulablePlugins.Len() == 0 && q.PendingPlugins.Len() == 0 {
			r.errHeap[key] = backoffExpiry(q.Timestamp, q.ConsecutiveErrorsCount, r.initialBackoff, r.maxBackoff)
		} else {
			delete(r.errHeap, key)
		}
	}
}
