//go:build oracle_1_34 || oracle_1_34_0 || oracle_1_35 || oracle_1_36

package main

// Up to 1.36 the scheduler pops pods (Scheduler.NextPod), the score heap's tie comparison is
// in package scheduler (overlay hook scheduler*.go.txt), and NewInformerFactory takes no
// informer name.

import (
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func newInformerFactory(cs kubernetes.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0)
}

func setTieHook(lowestName bool) { scheduler.OracleLowestName = lowestName }

// wrapNext records each popped pod, named if its cycle does not settle.
func wrapNext(r *serialRun) {
	next := r.sched.NextPod
	r.sched.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		pi, err := next(logger)
		if pi != nil && pi.Pod != nil {
			r.waiting = "the scheduling cycle of pod " + podKey(pi.Pod)
		}
		return pi, err
	}
}

// queuedAfterFailure is the pod's QueuedPodInfo after its failure was handled: up to 1.36
// handleSchedulingFailure sets the rejecting plugins on the popped one, which the queue keeps.
func queuedAfterFailure(_ *serialRun, pi *framework.QueuedPodInfo) *framework.QueuedPodInfo {
	return pi
}
