package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// waitTimeout is the watchdog of every wait in this package: a task that
// has not finished by then was lost (a lost wakeup, a stranded queue), and
// the test fails with a message saying so instead of hanging the suite. It
// is generous because -race on two CPUs is slow, and nothing correct comes
// near it.
const waitTimeout = 10 * time.Second

// env is one test's scheduler and a log of failures seen by futures on the
// worker goroutines (which must not call t.Fatal).
type env struct {
	t *testing.T
	s *scheduler.Scheduler

	mu    sync.Mutex
	fails []string
}

// newEnv starts a scheduler with cfg whose shutdown, and the check of the
// failure log after it, are registered as cleanups: no test leaves a worker
// behind, whatever path it takes out.
func newEnv(t *testing.T, cfg scheduler.Config) *env {
	t.Helper()
	e := &env{t: t}
	t.Cleanup(e.check) // cleanups run last-in first-out: this one after the shutdown
	s, err := scheduler.New(cfg)
	require.NoError(t, err)
	e.s = s
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v (a poll never returned?)", err)
		}
	})
	return e
}

// failf records a failure; any goroutine may call it.
func (e *env) failf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fails = append(e.fails, fmt.Sprintf(format, args...))
}

// check reports the recorded failures (the first 20 of them).
func (e *env) check() {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, f := range e.fails {
		if i == 20 {
			e.t.Errorf("... and %d more failures", len(e.fails)-i)
			break
		}
		e.t.Error(f)
	}
}

// checkNow reports the failures recorded so far and stops the test if
// there were any.
func (e *env) checkNow() {
	e.t.Helper()
	e.mu.Lock()
	n := len(e.fails)
	e.mu.Unlock()
	if n > 0 {
		e.t.FailNow() // the cleanup reports them
	}
}

// ctx returns a context ending after the watchdog timeout.
func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	e.t.Cleanup(cancel)
	return ctx
}

// wait waits for h's outcome; when the watchdog fires first it fails the
// test, naming the task and showing the scheduler's counters.
func wait[T any](e *env, h scheduler.JoinHandle[T], what string) (T, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	v, err := h.Wait(ctx)
	if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		e.t.Fatalf("%s: task did not finish within %v (lost wakeup?); stats %+v", what, waitTimeout, e.s.Stats())
	}
	return v, err
}

// eventually waits until cond holds, failing the test after the watchdog.
func eventually(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not true after %v: "+format, append([]any{waitTimeout}, args...)...)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// recv receives from ch, failing the test after the watchdog.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("%s: nothing received within %v", what, waitTimeout)
		panic("unreachable")
	}
}

// block waits on ch inside a poll, with the watchdog: a worker is never
// blocked forever by a test that failed elsewhere.
func (e *env) block(ch <-chan struct{}, what string) {
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		e.failf("%s: not released within %v", what, waitTimeout)
	}
}

// probe is an instrumented future: it counts its polls and cancels and
// checks the contract the scheduler owes every future: never polled
// concurrently with itself, never polled after it completed or was
// cancelled, never cancelled during a poll or after completion, and (by the
// race detector, through the plain field seq) every poll happens after the
// previous one, whichever worker made it.
type probe struct {
	e    *env
	name string
	fn   func(cx *future.Context) (int, bool)

	polls, cancels atomic.Int32
	inPoll, done   atomic.Bool
	// seq is a plain field every poll writes: a poll on one worker that is
	// not ordered after the poll before it on another is a data race.
	seq int
}

// newProbe returns a probe whose polls call fn.
func newProbe(e *env, name string, fn func(cx *future.Context) (int, bool)) *probe {
	return &probe{e: e, name: name, fn: fn}
}

// Poll checks the contract and calls fn.
func (p *probe) Poll(cx *future.Context) (int, bool) {
	if !p.inPoll.CompareAndSwap(false, true) {
		p.e.failf("%s: polled concurrently with itself", p.name)
	}
	defer p.inPoll.Store(false)
	if p.done.Load() {
		p.e.failf("%s: polled after completion", p.name)
	}
	if p.cancels.Load() != 0 {
		p.e.failf("%s: polled after cancel", p.name)
	}
	p.seq++
	p.polls.Add(1)
	v, ok := p.fn(cx)
	if ok {
		p.done.Store(true)
	}
	return v, ok
}

// Cancel counts the cancel and checks it comes at a legal time.
func (p *probe) Cancel() {
	if p.inPoll.Load() {
		p.e.failf("%s: cancelled during its own poll", p.name)
	}
	if p.done.Load() {
		p.e.failf("%s: cancelled after completion", p.name)
	}
	p.cancels.Add(1)
}

// never returns a probe that must never be polled.
func never(e *env, name string) *probe {
	return newProbe(e, name, func(*future.Context) (int, bool) {
		e.failf("%s: polled, but it should have been dropped unpolled", name)
		return 0, false
	})
}

// pendingProbe returns a probe that stays pending forever, registering its
// waker nowhere (a waker that never fires).
func pendingProbe(e *env, name string) *probe {
	return newProbe(e, name, func(*future.Context) (int, bool) { return 0, false })
}

// gate is a one-shot event a task waits on: the task's poll stores its
// waker under the mutex and is ready once the gate is open.
type gate struct {
	mu   sync.Mutex
	open bool
	wk   waker.Waker
}

// poll reports whether the gate is open, registering cx's waker if not.
func (g *gate) poll(cx *future.Context) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return true
	}
	g.wk = cx.Waker()
	return false
}

// Open opens the gate and wakes the waiting task.
func (g *gate) Open() {
	g.mu.Lock()
	g.open = true
	wk := g.wk
	g.mu.Unlock()
	wk.Wake()
}

// wake wakes the registered waker without opening (a spurious wake).
func (g *gate) wake() {
	g.mu.Lock()
	wk := g.wk
	g.mu.Unlock()
	wk.Wake()
}

// registered reports whether a task registered its waker.
func (g *gate) registered() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.wk.IsZero()
}

// gateProbe returns a probe that completes with v once g is open.
func gateProbe(e *env, name string, g *gate, v int) *probe {
	return newProbe(e, name, func(cx *future.Context) (int, bool) {
		if g.poll(cx) {
			return v, true
		}
		return 0, false
	})
}

// latch is a gate for many tasks.
type latch struct {
	mu   sync.Mutex
	open bool
	wks  []waker.Waker
}

// poll reports whether the latch is open, registering cx's waker if not.
func (l *latch) poll(cx *future.Context) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open {
		return true
	}
	l.wks = append(l.wks, cx.Waker())
	return false
}

// Open opens the latch and wakes every waiter.
func (l *latch) Open() {
	l.mu.Lock()
	l.open = true
	wks := l.wks
	l.wks = nil
	l.mu.Unlock()
	for _, wk := range wks {
		wk.Wake()
	}
}

// shutdown shuts e's scheduler down now, with the watchdog, so that a test
// can look at the final state (the cleanup's second Shutdown is a no-op).
func (e *env) shutdown() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(e.t, e.s.Shutdown(ctx))
}

// sumWorkers sums one per-worker counter.
func sumWorkers(st scheduler.Stats, f func(scheduler.WorkerStats) uint64) uint64 {
	var n uint64
	for _, w := range st.PerWorker {
		n += f(w)
	}
	return n
}
