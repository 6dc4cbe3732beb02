package main

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

type podResult struct {
	Pod      string  `json:"pod"`
	Node     *string `json:"node"`
	FitError *string `json:"fit_error"`
}

type output struct {
	Pods          []podResult `json:"pods,omitempty"`
	Preempted     []string    `json:"preempted"`
	Bound         int         `json:"bound"`
	Unschedulable int         `json:"unschedulable"`
	PodsPerSecond float64     `json:"pods_per_second"`
	Seconds       float64     `json:"seconds"`
}

type result struct {
	api     *apiServer
	pending []*corev1.Pod
	seconds float64
}

func (r *result) output(withPods bool) output {
	out := output{Preempted: append([]string{}, r.api.preempted...)}
	sort.Strings(out.Preempted)
	for _, p := range r.pending {
		key := p.Namespace + "/" + p.Name
		pr := podResult{Pod: key}
		if n, ok := r.api.boundNode[key]; ok {
			node := n
			pr.Node = &node
			out.Bound++
		} else {
			out.Unschedulable++
			if cur, err := r.api.tracker.Get(podsGVR, p.Namespace, p.Name); err == nil {
				for _, c := range cur.(*corev1.Pod).Status.Conditions {
					if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
						msg := c.Message
						pr.FitError = &msg
					}
				}
			}
		}
		if withPods {
			out.Pods = append(out.Pods, pr)
		}
	}
	out.Seconds = r.seconds
	if r.seconds > 0 {
		out.PodsPerSecond = float64(out.Bound) / r.seconds
	}
	return out
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }
