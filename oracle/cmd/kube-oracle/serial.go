package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	testingclock "k8s.io/utils/clock/testing"
)

const microsecond = time.Microsecond

// serialRun is the serial model of scheduler-reference.md §12: one ScheduleOne at a time,
// everything it causes settled before the next step.
type serialRun struct {
	api   *apiServer
	sched *scheduler.Scheduler
	clock *testingclock.FakeClock
	st    *settler
	env   oracleEnv
	// pods whose last failure had no rejecting plugin (they wait in the error backoff heap),
	// with their backoff expiry
	errHeap map[string]time.Time
	// async preemptions started during the cycle, run after it settled
	asyncPreemptions []func()
	waiting          string
	initialBackoff   time.Duration
	maxBackoff       time.Duration
}

func runSerial(in *inputs, cfg *schedulerapi.KubeSchedulerConfiguration, env oracleEnv) *result {
	api := newAPIServer(env)
	ctrl := newControllers(api, in, env, true)
	for _, o := range in.objects {
		api.seed(o)
	}
	r := &serialRun{api: api, env: env, errHeap: map[string]time.Time{},
		clock: testingclock.NewFakeClock(queueClockStart)}
	r.initialBackoff, r.maxBackoff = time.Second, time.Second
	if env.realBackoff {
		r.initialBackoff = time.Duration(cfg.PodInitialBackoffSeconds) * time.Second
		r.maxBackoff = time.Duration(cfg.PodMaxBackoffSeconds) * time.Second
	}
	r.st = newSettler(api)
	r.st.timeout = time.Duration(env.settleTimeout * float64(time.Second))
	r.st.waitingFor = func() string { return r.waiting }
	setHooks(env, true, r)
	ctx, cancel := context.WithCancel(klogCtx())
	defer cancel()
	r.waiting = "the informers' initial sync"
	r.sched = newScheduler(ctx, api, cfg, env, r.clock, 1)
	wrapScheduler(r)
	logger := klog.FromContext(ctx)
	r.sched.SchedulingQueue.Run(logger)
	if r.sched.APIDispatcher != nil {
		r.sched.APIDispatcher.Run(logger)
	}
	r.st.settle()

	start := time.Now()
	for _, p := range in.pending {
		key := p.Namespace + "/" + p.Name
		r.waiting = "the creation of pod " + key
		r.clock.Step(microsecond)
		if ctrl.beforePodCreate(p) {
			r.st.settle()
		}
		if _, err := api.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			fail("creating pod %s: %v", key, err)
		}
		ctrl.afterPodCreate(p)
		r.st.settle()
	}
	flushed := false
	for {
		active, normalBackoff, earliestErr, nErr := r.queueState()
		if active == 0 && normalBackoff == 0 {
			if nErr > 0 && !flushed {
				// Only the error backoff heap holds pods: jump to its earliest expiry + 1 s, where
				// the queue's 1 s flush (on the fake clock) runs once.
				flushed = true
				r.waiting = "the backoff flush"
				r.clock.SetTime(earliestErr.Add(time.Second))
				r.st.settle()
				continue
			}
			break
		}
		r.clock.Step(microsecond)
		r.waiting = "a scheduling cycle"
		r.sched.ScheduleOne(ctx)
		r.st.settle()
		for len(r.asyncPreemptions) > 0 {
			f := r.asyncPreemptions[0]
			r.asyncPreemptions = r.asyncPreemptions[1:]
			f()
			r.st.settle()
		}
	}
	res := &result{api: api, pending: in.pending, seconds: since(start)}
	cancel()
	return res
}

// queueState: activeQ length, backoffQ pods outside the error heap, and the error heap's
// earliest expiry and size.
func (r *serialRun) queueState() (active, normalBackoff int, earliestErr time.Time, nErr int) {
	pods, summary := r.sched.SchedulingQueue.PendingPods()
	a, b := parseSummary(summary)
	if a+b > len(pods) {
		panic(fmt.Sprintf("queue summary %q with %d pods", summary, len(pods)))
	}
	for _, p := range pods[a : a+b] {
		if exp, ok := r.errHeap[podKey(p)]; ok {
			nErr++
			if earliestErr.IsZero() || exp.Before(earliestErr) {
				earliestErr = exp
			}
		} else {
			normalBackoff++
		}
	}
	return a, normalBackoff, earliestErr, nErr
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// parseSummary reads "activeQ:%v; backoffQ:%v; unschedulablePods:%v".
func parseSummary(s string) (active, backoff int) {
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		switch k {
		case "activeQ":
			active = n
		case "backoffQ":
			backoff = n
		}
	}
	return
}

// backoffExpiry is the queue's backoff expiry for a failure at ts with count failures
// (backoff_queue.go: initial·2^(count-1) capped at max, truncated to the 1 s ordering window).
func backoffExpiry(ts time.Time, count int, initial, max time.Duration) time.Time {
	if count <= 0 || max == 0 {
		return ts
	}
	shift := count - 1
	d := max
	if shift < 62 && initial <= max>>uint(shift) {
		d = initial << uint(shift)
	}
	return ts.Add(d).Truncate(time.Second)
}
