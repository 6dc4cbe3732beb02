//go:build oracle_1_38

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const releaseName = "1.38"

// nominatingInfo is the FailureHandler's nominating info type (k8s.io/kube-scheduler/framework
// since 1.35).
type nominatingInfo = fwk.NominatingInfo

// eventRecorder is what the scheduler's recorder factory returns (events.EventRecorderLogger
// since 1.36).
type eventRecorder = events.EventRecorderLogger

// queueGetPod is SchedulingQueue.GetPod (1.38 takes a context first): the queue's own record of a pod.
func queueGetPod(q queue.SchedulingQueue, pod *v1.Pod) (*framework.QueuedPodInfo, bool) {
	return q.GetPod(context.Background(), pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
}
