//go:build oracle_1_37

package main

import fwk "k8s.io/kube-scheduler/framework"

const releaseName = "1.37"

// nominatingInfo is the FailureHandler's nominating info type (k8s.io/kube-scheduler/framework
// since 1.35).
type nominatingInfo = fwk.NominatingInfo
