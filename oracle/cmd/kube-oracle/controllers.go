package main

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// controllers emulates what kube-controller-manager and the CSI sidecars would do at once
// (oracle contract, "Dynamic Resource Allocation" and "Storage").
type controllers struct {
	api    *apiServer
	in     *inputs
	env    oracleEnv
	serial bool
}

func newControllers(api *apiServer, in *inputs, env oracleEnv, serial bool) *controllers {
	c := &controllers{api: api, in: in, env: env, serial: serial}
	c.install()
	return c
}

// beforePodCreate runs just before a pending pod is created (serial mode); true if it wrote.
func (c *controllers) beforePodCreate(p *corev1.Pod) bool {
	return c.createClaimsFromTemplates(p)
}

// beforeBurst (real time) creates the claims of all pending pods, then waits for the claim lister.
func (c *controllers) beforeBurst(ctx context.Context, pods []*corev1.Pod) {
	for _, p := range pods {
		c.createClaimsFromTemplates(p)
	}
	c.waitForDelivery()
}

// afterPodCreate runs right after a pending pod is created: the ephemeral-volume controller.
func (c *controllers) afterPodCreate(p *corev1.Pod) {
	c.createEphemeralClaims(p)
}

func sleepBriefly() { time.Sleep(time.Millisecond) }
