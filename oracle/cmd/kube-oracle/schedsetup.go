package main

import (
	"context"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/utils/clock"
)

// newScheduler builds kube-scheduler the way cmd/kube-scheduler's Setup does, on the fake
// API server, and starts its informers.
func newScheduler(ctx context.Context, api *apiServer, cfg *schedulerapi.KubeSchedulerConfiguration, env oracleEnv,
	clk clock.WithTicker, parallelism int32) *scheduler.Scheduler {
	factory := newInformerFactory(api.cs)
	initial, max := int64(1), int64(1)
	if env.realBackoff {
		initial, max = cfg.PodInitialBackoffSeconds, cfg.PodMaxBackoffSeconds
	}
	opts := []scheduler.Option{
		scheduler.WithComponentConfigVersion(cfg.TypeMeta.APIVersion),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(initial),
		scheduler.WithPodMaxBackoffSeconds(max),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(parallelism),
		scheduler.WithPodMaxInUnschedulablePodsDuration(podMaxInUnschedulable(cfg)),
	}
	if clk != nil {
		opts = append(opts, scheduler.WithClock(clk))
	}
	recorders := func(string) eventRecorder { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, api.cs, factory, nil, recorders, opts...)
	if err != nil {
		fail("creating the scheduler: %v", err)
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			fail("informer %v did not sync", typ)
		}
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		fail("scheduler handlers did not sync: %v", err)
	}
	return sched
}

func podMaxInUnschedulable(cfg *schedulerapi.KubeSchedulerConfiguration) time.Duration {
	// kube-scheduler's default (the flag --pod-max-in-unschedulable-pods-duration).
	return 5 * time.Minute
}

func klogCtx() context.Context {
	return klog.NewContext(context.Background(), klog.Background())
}
