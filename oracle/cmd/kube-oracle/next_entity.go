//go:build oracle_1_37 || oracle_1_38

package main

// From 1.37 the scheduler pops entities, a pod or a pod group (Scheduler.NextEntity), and the
// score heap's tie comparison is in package framework (sorted_nodes.go; overlay hook
// framework-1.37.go.txt), and NewInformerFactory takes an informer name (nil: none).

import (
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func newInformerFactory(cs kubernetes.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0, nil)
}

func setTieHook(lowestName bool) { framework.OracleLowestName = lowestName }

// wrapNext records each popped pod or pod group, named if its cycle does not settle.
func wrapNext(r *serialRun) {
	next := r.sched.NextEntity
	r.sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		e, err := next(logger)
		switch v := e.(type) {
		case *framework.QueuedPodInfo:
			if v != nil && v.Pod != nil {
				r.waiting = "the scheduling cycle of pod " + podKey(v.Pod)
			}
		case *framework.QueuedPodGroupInfo:
			if v != nil {
				r.waiting = "the scheduling cycle of a pod group"
			}
		}
		return e, err
	}
}

// queuedAfterFailure is the queue's own record of a pod after its failure was handled, or nil
// when the queue no longer holds it. From 1.37 handleSchedulingFailure works on a copy of the
// popped QueuedPodInfo: the copy gets the failure's rejecting plugins, timestamp and error
// count and goes into the queue, while the popped one keeps the previous attempt's.
func queuedAfterFailure(r *serialRun, pi *framework.QueuedPodInfo) *framework.QueuedPodInfo {
	if q, ok := queueGetPod(r.sched.SchedulingQueue, pi.Pod); ok {
		return q
	}
	return nil
}
