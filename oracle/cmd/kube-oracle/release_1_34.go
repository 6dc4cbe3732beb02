//go:build oracle_1_34 || oracle_1_34_0

package main

import (
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const releaseName = "1.34"

// nominatingInfo is the FailureHandler's nominating info type (pkg/scheduler/framework in 1.34).
type nominatingInfo = framework.NominatingInfo

// eventRecorder is what the scheduler's recorder factory returns (events.EventRecorderLogger
// since 1.36).
type eventRecorder = events.EventRecorder
