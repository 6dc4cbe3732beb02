package main

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// runRealTime is `replay` without --serial: the scheduler's own goroutines (Scheduler.Run:
// queue flushes, dispatcher, ScheduleOne loop) on real time. The whole burst of pending pods
// is created and delivered by the informers before Run starts; the run stops after
// quietSeconds without an API write or a watch event.
func runRealTime(in *inputs, cfg *schedulerapi.KubeSchedulerConfiguration, env oracleEnv, quietSeconds float64) *result {
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
	for {
		last := time.Unix(0, api.lastActivity.Load())
		if time.Since(last) >= quiet && api.tracked.Load() == 0 {
			break
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
