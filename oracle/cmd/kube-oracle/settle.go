package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Settling (serial mode): after each creation and each cycle the harness waits until the
// scheduler has handled everything that follows from it — every watch event delivered and
// handled by every informer listener, the binding goroutine finished, the API dispatcher idle,
// our own controller goroutines done. Rather than patching counters into client-go and the
// scheduler, it waits for the in-process system to be quiescent: our watchers hold no
// undelivered event, and a stop-the-world snapshot of all goroutines (runtime.Stack) shows
// every one of them, except the caller, blocked in an idle wait (channel receive, select,
// condition variable) and none inside a binding cycle. A goroutine in such a wait cannot be
// woken by anything but another goroutine's action or a timer, so when all are waiting and no
// timer that matters is armed, nothing more will happen. The timers that matter are the
// volume binding poll (inside the binding goroutine, which counts as busy until it returns)
// and the queue's backoff flush (on the fake clock, which only the harness moves).

// busyStates are goroutine states that mean work is in progress.
var busyStates = map[string]bool{
	"running": true, "runnable": true, "chan send": true, "sync.Mutex.Lock": true,
	"sync.RWMutex.Lock": true, "sync.RWMutex.RLock": true, "preempted": true,
	"GC assist wait": true, "GC assist marking": true, "semacquire": true,
}

// busyFrames: a goroutine with one of these functions on its stack is working, whatever its state.
var busyFrames = []string{
	"(*Scheduler).bindingCycle",
	"(*Scheduler).runBindingCycle",
	"(*Scheduler).handleBindingCycleError",
	"main.(*apiServer).goTracked",
}

type settler struct {
	api     *apiServer
	timeout time.Duration
	buf     []byte
	// what the run waits for, named in a timeout message
	waitingFor func() string
}

func newSettler(api *apiServer) *settler {
	return &settler{api: api, timeout: 120 * time.Second, buf: make([]byte, 1<<20)}
}

func currentGoroutineID() string {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	f := strings.Fields(string(b[:n]))
	if len(f) >= 2 {
		return f[1]
	}
	return ""
}

// busy returns a description of the first goroutine found working, or "" when all are idle.
func (s *settler) busy(self string) string {
	if n := s.api.pending.Load(); n > 0 {
		return fmt.Sprintf("%d watch events not yet delivered", n)
	}
	if n := s.api.tracked.Load(); n > 0 {
		return fmt.Sprintf("%d controller goroutines running", n)
	}
	for {
		n := runtime.Stack(s.buf, true)
		if n < len(s.buf) {
			s.buf = s.buf[:n]
			break
		}
		s.buf = make([]byte, 2*len(s.buf))
	}
	dump := s.buf
	s.buf = s.buf[:cap(s.buf)]
	for _, g := range bytes.Split(dump, []byte("\n\n")) {
		header, _, _ := bytes.Cut(g, []byte("\n"))
		// goroutine 123 [chan receive, 2 minutes]:
		h := string(header)
		if !strings.HasPrefix(h, "goroutine ") {
			continue
		}
		id := strings.Fields(h)[1]
		if id == self {
			continue
		}
		open, close := strings.IndexByte(h, '['), strings.LastIndexByte(h, ']')
		if open < 0 || close < open {
			continue
		}
		state := h[open+1 : close]
		if i := strings.IndexByte(state, ','); i >= 0 {
			state = state[:i]
		}
		if busyStates[state] {
			return firstFrames(g)
		}
		for _, f := range busyFrames {
			if bytes.Contains(g, []byte(f)) {
				return firstFrames(g)
			}
		}
	}
	return ""
}

func firstFrames(g []byte) string {
	lines := strings.Split(string(g), "\n")
	if len(lines) > 7 {
		lines = lines[:7]
	}
	return strings.Join(lines, " | ")
}

// settle waits until the system is quiescent (two idle snapshots in a row).
func (s *settler) settle() {
	self := currentGoroutineID()
	deadline := time.Now().Add(s.timeout)
	quiet := 0
	spins := 0
	for {
		b := s.busy(self)
		if b == "" {
			quiet++
			if quiet >= 2 {
				return
			}
			runtime.Gosched()
			continue
		}
		quiet = 0
		if time.Now().After(deadline) {
			what := "the run"
			if s.waitingFor != nil {
				what = s.waitingFor()
			}
			fmt.Fprintf(os.Stderr, "kube-oracle: timeout: no settling after %s while waiting for %s; still busy: %s\n", s.timeout, what, b)
			os.Exit(3)
		}
		spins++
		if spins < 50 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}
