//go:build oracle_1_38

package main

import (
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
)

const releaseName = "1.38"

// nominatingInfo is the FailureHandler's nominating info type (k8s.io/kube-scheduler/framework
// since 1.35).
type nominatingInfo = fwk.NominatingInfo

// eventRecorder is what the scheduler's recorder factory returns (events.EventRecorderLogger
// since 1.36).
type eventRecorder = events.EventRecorderLogger
