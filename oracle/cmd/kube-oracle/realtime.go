package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// runRealTime is `replay` without --serial: the scheduler's own goroutines (Scheduler.Run:
// queue flushes, dispatcher, ScheduleOne loop) on real time. The whole burst of pending pods
// is created and delivered by the informers before Run starts; the run stops after
// quietSeconds without an API write or a watch event, once none of our controller goroutines
// runs and no pending pod is in a binding cycle (assumed in the scheduler's cache, not yet
// bound: e.g. VolumeBinding's PreBind waiting for a volume). A run that has not stopped
// timeoutSeconds after the first creation exits with status 3, naming the pods not bound.
func runRealTime(in *inputs, cfg *schedulerapi.KubeSchedulerConfiguration, env oracleEnv, quietSeconds, timeoutSeconds float64) *result {
	api := newAPIServer(env)
	ctrl := newControllers(api, in, env, false)
	for _, o := range in.objects {
		api.seed(o)
	}
	setHooks(env, false, nil)
	ctx, cancel := context.WithCancel(klogCtx())
	defer cancel()
	sched := newScheduler(ctx, api, cfg, env, nil, cfg.Parallelism)

	start := time.Now()
	ctrl.beforeBurst(ctx, in.pending)
	for _, p := range in.pending {
		if _, err := api.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			fail("creating pod %s/%s: %v", p.Namespace, p.Name, err)
		}
		ctrl.afterPodCreate(p)
	}
	// Let the informers deliver the burst before the scheduling loop starts.
	deadline := time.Now().Add(60 * time.Second)
	for api.pending.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for time.Now().Before(deadline) {
		pods, _ := sched.SchedulingQueue.PendingPods()
		if len(pods) >= len(in.pending) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	go sched.Run(ctx)
	quiet := time.Duration(quietSeconds * float64(time.Second))
	limit := time.Duration(timeoutSeconds * float64(time.Second))
	for {
		last := time.Unix(0, api.lastActivity.Load())
		if time.Since(last) >= quiet && api.tracked.Load() == 0 && len(assumedPods(sched.Cache, in.pending)) == 0 {
			break
		}
		if time.Since(start) >= limit {
			api.cs.Fake.Lock() // freeze the API for the report
			fmt.Fprintf(os.Stderr, "kube-oracle: timeout: the real-time run did not stop within %s "+
				"(%s without an API write or watch event, no pod in a binding cycle); %s\n",
				limit, quiet, notBound(api, in.pending, assumedPods(sched.Cache, in.pending)))
			os.Exit(3)
		}
		time.Sleep(10 * time.Millisecond)
	}
	last := time.Unix(0, api.lastActivity.Load())
	secs := last.Sub(start).Seconds()
	api.cs.Fake.Lock() // freeze the API: later writes (after the stop) never land
	res := &result{api: api, pending: in.pending, seconds: secs}
	cancel()
	return res
}

// podCache is the part of the scheduler's cache the stop condition reads.
type podCache interface {
	IsAssumedPod(pod *corev1.Pod) (bool, error)
}

// assumedPods are the pending pods the scheduler's cache holds as assumed: in a binding cycle.
func assumedPods(c podCache, pending []*corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, p := range pending {
		if ok, err := c.IsAssumedPod(p); err == nil && ok {
			out[p.Namespace+"/"+p.Name] = true
		}
	}
	return out
}

// notBound names the pending pods without a bind (the first 20), those in a binding cycle marked.
func notBound(api *apiServer, pending []*corev1.Pod, assumed map[string]bool) string {
	var names []string
	for _, p := range pending {
		key := p.Namespace + "/" + p.Name
		if _, ok := api.boundNode[key]; ok {
			continue
		}
		if assumed[key] {
			key = "pod " + key + " (in a binding cycle)"
		} else {
			key = "pod " + key
		}
		names = append(names, key)
	}
	if len(names) == 0 {
		return "every pending pod is bound"
	}
	head := names
	if len(head) > 20 {
		head = head[:20]
	}
	text := fmt.Sprintf("%d pending pod(s) not bound: %s", len(names), strings.Join(head, ", "))
	if len(names) > len(head) {
		text += fmt.Sprintf(" and %d more", len(names)-len(head))
	}
	return text
}
