//go:build oracle_1_34 || oracle_1_34_0

package main

import "k8s.io/kubernetes/pkg/scheduler/framework"

const releaseName = "1.34"

// nominatingInfo is the FailureHandler's nominating info type (pkg/scheduler/framework in 1.34).
type nominatingInfo = framework.NominatingInfo
