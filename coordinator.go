package blitz

// The graceful-shutdown coordinator: a trigger, the guards that in-flight
// work holds, and the wait for them. See "Graceful shutdown" in the package
// documentation.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// Coordinator coordinates a graceful shutdown: a trigger that any goroutine
// or task pulls once (Trigger, or a signal with TriggerOnSignal), guards
// that in-flight work holds (Guard), and a wait until the shutdown was
// triggered and every guard was released (Wait for goroutines, Drained for
// tasks), bounded by a context or a timeout. It is
// independent of Runtime.Shutdown, which stops a runtime; a server
// typically triggers the coordinator, waits for it, then shuts its runtime
// down.
//
// The order is linearized by the coordinator's lock: a Guard taken before
// Trigger is waited for; every Guard after it is refused with
// ErrShuttingDown. The zero Coordinator is valid; it must not be copied
// after first use. All methods may be called by any goroutine or task.
type Coordinator struct {
	_  noCopy
	mu sync.Mutex
	// triggered is set once, by Trigger. Guarded by mu.
	triggered bool
	// drained is set once, when triggered is set and no guard is held.
	// Guarded by mu.
	drained bool
	// doneCh and drainedCh are made on first demand (Done, Wait) and closed
	// when triggered and drained are set, whichever comes later. Guarded by
	// mu.
	doneCh, drainedCh chan struct{}
	// head and tail are the held guards, oldest first; held counts them.
	// Guarded by mu.
	head, tail *Guard
	held       int
	// triggerWaiters are the pending TriggerFutures, drainWaiters the
	// pending DrainFutures. Guarded by mu.
	triggerWaiters, drainWaiters waker.List[struct{}]
}

// NewCoordinator returns a coordinator not yet triggered, with no guard.
func NewCoordinator() *Coordinator { return &Coordinator{} }

// Trigger starts the shutdown: later Guards are refused, and the futures of
// WhenTriggered and the channel of Done complete. Idempotent; it never
// blocks. Any goroutine or task may call it.
func (c *Coordinator) Trigger() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.triggered {
		return
	}
	c.triggered = true
	if c.doneCh != nil {
		close(c.doneCh)
	}
	c.triggerWaiters.WakeAll() // Wake never blocks
	if c.held == 0 {
		c.drainLocked()
	}
}

// drainLocked records that the shutdown drained and wakes its waiters.
// c.mu must be held.
func (c *Coordinator) drainLocked() {
	c.drained = true
	if c.drainedCh != nil {
		close(c.drainedCh)
	}
	c.drainWaiters.WakeAll()
}

// Triggered reports whether Trigger was called.
func (c *Coordinator) Triggered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.triggered
}

// Done returns a channel closed by Trigger, for goroutines to select on.
// Tasks use WhenTriggered.
func (c *Coordinator) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.doneCh == nil {
		c.doneCh = make(chan struct{})
		if c.triggered {
			close(c.doneCh)
		}
	}
	return c.doneCh
}

// Held returns the number of guards held.
func (c *Coordinator) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// Guard admits one piece of work, named for the Report: the shutdown waits
// for its Release. After Trigger it refuses with an error wrapping
// ErrShuttingDown. Any goroutine or task may call it.
func (c *Coordinator) Guard(name string) (*Guard, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.triggered {
		return nil, fmt.Errorf("%w: guard %q refused", ErrShuttingDown, name)
	}
	g := &Guard{c: c, name: name, held: true, prev: c.tail}
	if c.tail != nil {
		c.tail.next = g
	} else {
		c.head = g
	}
	c.tail = g
	c.held++
	return g, nil
}

// Guard is one piece of work admitted by a Coordinator, held until Release.
type Guard struct {
	// c and name are immutable.
	c    *Coordinator
	name string
	// held, prev and next place the guard in c's list while it is held.
	// Guarded by c.mu.
	held       bool
	prev, next *Guard
}

// Name returns the name the guard was taken with.
func (g *Guard) Name() string { return g.name }

// Release ends the guard's work; the last Release after Trigger completes
// the shutdown's wait. Idempotent. Any goroutine or task may call it.
func (g *Guard) Release() {
	c := g.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !g.held {
		return
	}
	g.held = false
	if g.prev != nil {
		g.prev.next = g.next
	} else {
		c.head = g.next
	}
	if g.next != nil {
		g.next.prev = g.prev
	} else {
		c.tail = g.prev
	}
	g.prev, g.next = nil, nil
	c.held--
	if c.triggered && c.held == 0 {
		c.drainLocked()
	}
}

// Report is what a shutdown's wait found at its end.
type Report struct {
	// Triggered says whether the shutdown had been triggered.
	Triggered bool
	// Held lists the names of the guards still held, oldest first: the work
	// that did not finish. len(Held) is their count; it is empty when the
	// shutdown drained.
	Held []string
}

// reportLocked takes the Report of now.
// c.mu must be held.
func (c *Coordinator) reportLocked() Report {
	r := Report{Triggered: c.triggered}
	if c.held > 0 {
		r.Held = make([]string, 0, c.held)
		for g := c.head; g != nil; g = g.next {
			r.Held = append(r.Held, g.name)
		}
	}
	return r
}

// notDrainedLocked is the error of a wait that ended before the shutdown
// drained, wrapping ErrShutdownTimeout and cause.
// c.mu must be held.
func (c *Coordinator) notDrainedLocked(cause error) error {
	if !c.triggered {
		return fmt.Errorf("%w: not triggered, %d guards held: %w", ErrShutdownTimeout, c.held, cause)
	}
	return fmt.Errorf("%w: %d guards still held: %w", ErrShutdownTimeout, c.held, cause)
}

// Wait blocks the calling goroutine until the shutdown was triggered and
// every guard released, and returns an empty Report (its Triggered set) and
// nil. If ctx ends first, the Report names the guards still held and the
// error wraps ErrShutdownTimeout and ctx's cause; a drain at the same
// moment wins. A task must not wait (it would block its worker): called
// from a task before the drain, Wait returns the Report of now and an
// error wrapping ErrBlockingInTask at once. A task polls Drained instead.
func (c *Coordinator) Wait(ctx context.Context) (Report, error) {
	c.mu.Lock()
	if c.drainedCh == nil {
		c.drainedCh = make(chan struct{})
		if c.drained {
			close(c.drainedCh)
		}
	}
	ch := c.drainedCh
	drained := c.drained
	c.mu.Unlock()
	if !drained && scheduler.OnWorker() {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.reportLocked(), fmt.Errorf("blitz: coordinator wait: %w", ErrBlockingInTask)
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drained {
		return Report{Triggered: true}, nil
	}
	return c.reportLocked(), c.notDrainedLocked(context.Cause(ctx))
}

// TriggerOnSignal makes the first of sigs to arrive trigger the
// coordinator. The signals are caught from when it returns, by a one-shot
// listener (see Signal) that a detached task on h's runtime waits on, and
// so belongs to; the listener leaves once the coordinator is triggered, by
// the signal or otherwise, or when the runtime shuts down. It fails with
// Signal's errors, or with TrySpawnOn's when the runtime refuses the task
// (ErrShutdown once it is shutting down).
// Any goroutine or task may call it.
func (c *Coordinator) TriggerOnSignal(h Handle, sigs ...os.Signal) error {
	h.Runtime() // the zero Handle panics before a listener is registered
	sf := Signal(sigs...)
	if sf.l == nil {
		return sf.err
	}
	t := &signalTrigger{c: c, sig: sf, trig: TriggerFuture{c: c}}
	jh, err := TrySpawnOn(h, future.Future[struct{}](t))
	if err != nil {
		sf.Cancel()
		return fmt.Errorf("blitz: trigger on signal: %w", err)
	}
	jh.Detach()
	return nil
}

// signalTrigger is the task of TriggerOnSignal: it triggers c on sig's
// signal, and ends without it once c is triggered.
type signalTrigger struct {
	c    *Coordinator
	sig  *SignalFuture
	trig TriggerFuture
}

// Poll waits for the trigger or the signal, whichever comes first.
func (t *signalTrigger) Poll(cx *future.Context) (struct{}, bool) {
	if _, ok := t.trig.Poll(cx); ok {
		t.sig.Cancel()
		return struct{}{}, true
	}
	if r, ok := t.sig.Poll(cx); ok {
		t.trig.Cancel()
		if r.Err == nil {
			t.c.Trigger()
		}
		return struct{}{}, true
	}
	return struct{}{}, false
}

// Cancel removes the listener and the trigger waiter.
func (t *signalTrigger) Cancel() {
	t.sig.Cancel()
	t.trig.Cancel()
}

// WhenTriggered returns a future that completes once the coordinator is
// triggered, for tasks to select on (future.Select, future.Race).
func (c *Coordinator) WhenTriggered() *TriggerFuture { return &TriggerFuture{c: c} }

// TriggerFuture is the future of WhenTriggered: its pointer is a
// future.Future[struct{}] and a future.Canceler. It must not be copied
// after its first poll.
type TriggerFuture struct {
	_ noCopy
	c *Coordinator
	// w is the future's place among c's triggerWaiters. Guarded by c.mu.
	w waker.Waiter[struct{}]
	// done is set when Poll completed, cancelled by Cancel.
	done, cancelled bool
}

// Poll completes once Trigger was called. Polling after completion panics
// with future.ErrPolledAfterCompletion, after Cancel with
// future.ErrPolledAfterCancel.
func (f *TriggerFuture) Poll(cx *future.Context) (struct{}, bool) {
	switch {
	case f.cancelled:
		panic(future.ErrPolledAfterCancel)
	case f.done:
		panic(future.ErrPolledAfterCompletion)
	}
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.triggered {
		c.triggerWaiters.Remove(&f.w)
		f.done = true
		return struct{}{}, true
	}
	c.triggerWaiters.Register(&f.w, cx.Waker())
	return struct{}{}, false
}

// Cancel withdraws the waiter. Idempotent.
func (f *TriggerFuture) Cancel() {
	if f.cancelled {
		return
	}
	f.cancelled = true
	f.c.mu.Lock()
	f.c.triggerWaiters.Remove(&f.w)
	f.c.mu.Unlock()
}

// Drained returns a future that completes once the shutdown was triggered
// and every guard released, with an empty Report (its Triggered set): the
// Wait of tasks. With a timeout above 0, counted from this call, it
// completes when that runs out with the Report naming the guards still
// held and an error wrapping ErrShutdownTimeout and ErrTimeout.
func (c *Coordinator) Drained(timeout time.Duration) *DrainFuture {
	if timeout <= 0 {
		return &DrainFuture{c: c}
	}
	return &DrainFuture{c: c, timeout: timeout, sleep: SleepFuture{deadline: after(timeout)}}
}

// DrainFuture is the future of Drained: its pointer is a
// future.Future[future.Result[Report]] and a future.Canceler. It must not be
// copied after its first poll.
type DrainFuture struct {
	_ noCopy
	c *Coordinator
	// w is the future's place among c's drainWaiters. Guarded by c.mu.
	w waker.Waiter[struct{}]
	// timeout is the bound (0: none) and sleep its timer.
	timeout time.Duration
	sleep   SleepFuture
	// done is set when Poll completed, cancelled by Cancel.
	done, cancelled bool
}

// Poll completes once the shutdown drained or the timeout ran out (a drain
// at the same moment wins). Polling after completion panics with
// future.ErrPolledAfterCompletion, after Cancel with
// future.ErrPolledAfterCancel.
func (f *DrainFuture) Poll(cx *future.Context) (future.Result[Report], bool) {
	switch {
	case f.cancelled:
		panic(future.ErrPolledAfterCancel)
	case f.done:
		panic(future.ErrPolledAfterCompletion)
	}
	c := f.c
	c.mu.Lock()
	if c.drained {
		c.drainWaiters.Remove(&f.w)
		c.mu.Unlock()
		f.finish()
		return future.Ok(Report{Triggered: true}), true
	}
	c.drainWaiters.Register(&f.w, cx.Waker())
	c.mu.Unlock()
	if f.timeout <= 0 {
		return future.Result[Report]{}, false
	}
	if _, ok := f.sleep.Poll(cx); !ok {
		return future.Result[Report]{}, false
	}
	c.mu.Lock()
	c.drainWaiters.Remove(&f.w)
	var r future.Result[Report]
	if c.drained {
		r.Value = Report{Triggered: true}
	} else {
		r.Value = c.reportLocked()
		r.Err = c.notDrainedLocked(fmt.Errorf("%w after %v", ErrTimeout, f.timeout))
	}
	c.mu.Unlock()
	f.finish()
	return r, true
}

// finish marks the future done and removes its timer.
func (f *DrainFuture) finish() {
	f.done = true
	f.sleep.Cancel()
}

// Cancel withdraws the waiter and removes the timer. Idempotent.
func (f *DrainFuture) Cancel() {
	if f.cancelled {
		return
	}
	f.cancelled = true
	f.c.mu.Lock()
	f.c.drainWaiters.Remove(&f.w)
	f.c.mu.Unlock()
	f.sleep.Cancel()
}
