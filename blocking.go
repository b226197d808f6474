package blitz

import (
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/blocking"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/contain"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// blockingState is where a BlockingFuture is in its life.
type blockingState uint8

const (
	blockingIdle      blockingState = iota // not submitted yet
	blockingSubmitted                      // queued or running on the pool
	blockingDone                           // fn returned or panicked; outcome stored
	blockingTaken                          // the outcome was returned by Poll
	blockingAbandoned                      // cancelled while submitted: the outcome is dropped
)

// BlockingFuture runs a function on the runtime's blocking pool, off the
// workers, and resolves to its result: the bridge from tasks to code that
// blocks (a system call without an async form, a cgo call, a library that
// does I/O its own way). Make one with Blocking; SpawnBlocking runs one as a
// task of its own.
//
// The function starts at the first poll. A panic in it is re-raised in the
// task that polls the future, carrying the function's stack as a
// *PanicError, so it reaches that task's JoinHandle. Cancelling the future
// (a select that dropped it, the task's cancel) cannot stop a function that
// is running: it runs to the end and its result is dropped.
type BlockingFuture[T any] struct {
	fn func() (T, error)
	// dispose, when set, releases a value nobody will take (the call was
	// abandoned after fn made it). Immutable after construction.
	dispose func(T)
	// home, when set, is the runtime whose pool runs fn if the future is
	// polled outside a runtime (by a goroutine through an io adapter: the
	// object that made the future remembers its runtime). Immutable after
	// construction.
	home *Runtime
	// sched is the scheduler of the runtime whose pool runs fn, to report a
	// panic of the Waker that finish calls. Written by submit before the
	// pool has the task; read by the pool thread after.
	sched *scheduler.Scheduler

	// task is the pool's record of the call; Run and Panicked are set at
	// the first poll.
	task blocking.Task

	// mu guards the fields below, shared by the polling task and the pool
	// worker that runs fn.
	mu    sync.Mutex
	state blockingState
	wk    waker.Waker
	val   T
	err   error
	panic *PanicError
}

// Blocking returns a future that runs fn on the blocking pool of the
// runtime that polls it and resolves to fn's value and error. If the pool
// refuses the call (the runtime is shutting down) the result's error wraps
// ErrShutdown; polled outside a runtime, the error is ErrNoRuntime. A nil
// fn makes the result's error ErrNilFuture, at the first poll.
func Blocking[T any](fn func() (T, error)) *BlockingFuture[T] {
	return &BlockingFuture[T]{fn: fn}
}

// blockingOn is Blocking for an object that belongs to rt (a File, a
// child's pipe): polled outside a runtime, the call runs on rt's pool.
func blockingOn[T any](rt *Runtime, fn func() (T, error)) *BlockingFuture[T] {
	return &BlockingFuture[T]{fn: fn, home: rt}
}

// Poll submits the call at the first poll and returns its outcome once fn
// has returned. Returning the outcome consumes a unit of the task's budget;
// with none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (b *BlockingFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	if !cx.Proceed() {
		return future.Result[T]{}, false
	}
	v, ok := b.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (b *BlockingFuture[T]) poll(cx *future.Context) (future.Result[T], bool) {
	b.mu.Lock()
	switch b.state {
	case blockingIdle:
		if b.fn == nil {
			b.state = blockingTaken
			b.mu.Unlock()
			return future.Fail[T](fmt.Errorf("blitz: Blocking: %w", ErrNilFuture)), true
		}
		b.wk = cx.Waker()
		b.state = blockingSubmitted
		b.mu.Unlock()
		if err := b.submit(cx); err != nil {
			b.mu.Lock()
			b.state = blockingTaken
			b.wk = waker.Waker{}
			b.mu.Unlock()
			return future.Fail[T](err), true
		}
		return future.Result[T]{}, false
	case blockingSubmitted:
		if wk := cx.Waker(); !b.wk.WillWake(wk) {
			b.wk = wk
		}
		b.mu.Unlock()
		return future.Result[T]{}, false
	case blockingDone:
		b.state = blockingTaken
		v, err, p := b.val, b.err, b.panic
		var zero T
		b.val, b.err, b.panic = zero, nil, nil
		b.mu.Unlock()
		if p != nil {
			panic(p)
		}
		return future.Result[T]{Value: v, Err: err}, true
	}
	b.mu.Unlock()
	panic(future.ErrPolledAfterCompletion)
}

// submit hands the call to the pool of the runtime polling cx.
func (b *BlockingFuture[T]) submit(cx *future.Context) error {
	h, ok := Current(cx)
	if !ok && b.home != nil {
		h, ok = Handle{rt: b.home}, true
	}
	if !ok {
		return ErrNoRuntime
	}
	if err := h.rt.refuseSimulated("a blocking call"); err != nil {
		return err
	}
	b.sched = h.rt.sched
	b.task.Run = b.run
	b.task.Panicked = b.panicked
	if err := h.rt.pool.Submit(&b.task); err != nil {
		h.rt.blockingRejected.Add(1)
		return fmt.Errorf("%w: %w", ErrShutdown, err)
	}
	return nil
}

// run is the pool's side: it calls fn and stores its outcome.
func (b *BlockingFuture[T]) run() {
	v, err := b.fn()
	if !b.finish(func() { b.val, b.err = v, err }) && err == nil && b.dispose != nil {
		b.dispose(v)
	}
}

// panicked stores a panic of fn, to be re-raised by Poll.
func (b *BlockingFuture[T]) panicked(value any, stack []byte) {
	b.finish(func() { b.panic = &PanicError{Value: value, Stack: stack} })
}

// finish stores the outcome (set runs under mu) and wakes the waiting task;
// it reports false, storing nothing, when the future was abandoned.
func (b *BlockingFuture[T]) finish(set func()) bool {
	b.mu.Lock()
	if b.state == blockingAbandoned {
		b.mu.Unlock()
		return false
	}
	set()
	b.state = blockingDone
	wk := b.wk
	b.wk = waker.Waker{}
	b.mu.Unlock()
	// Contained: a panic here would reach the pool as fn's own, and the
	// outcome just stored would never be taken.
	contain.WakeReported(b.sched, wk, contain.OfBlockingPool)
	return true
}

// started reports whether the call was handed to the pool (and not yet
// cancelled): its fn runs, or ran, and its outcome waits for a poll.
func (b *BlockingFuture[T]) started() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == blockingSubmitted || b.state == blockingDone
}

// Cancel abandons the call: a running fn runs to its end and its outcome is
// dropped; a queued one still runs (the pool runs what it accepted).
func (b *BlockingFuture[T]) Cancel() {
	b.mu.Lock()
	var drop func()
	switch b.state {
	case blockingSubmitted:
		b.state = blockingAbandoned
		b.wk = waker.Waker{}
	case blockingDone:
		var zero T
		v, err := b.val, b.err
		b.state, b.val, b.err, b.panic = blockingTaken, zero, nil, nil
		if err == nil && b.dispose != nil {
			drop = func() { b.dispose(v) }
		}
	}
	b.mu.Unlock()
	if drop != nil {
		drop()
	}
}

// SpawnBlocking runs fn on h's blocking pool and returns the JoinHandle of
// its value, usable from tasks (poll it) and goroutines (Wait) alike. A
// panic in fn reaches the handle as a *PanicError with fn's stack. The call
// is a task of the runtime waiting for the pool, so a runtime that is
// shutting down refuses it with ErrShutdown, as SpawnOn does. A nil fn
// starts nothing: the JoinHandle is resolved with ErrNilFuture.
func SpawnBlocking[T any](h Handle, fn func() T) JoinHandle[T] {
	if fn == nil {
		return SpawnOn[T](h, nil)
	}
	return SpawnOn(h, future.Future[T](&blockingValue[T]{f: Blocking(func() (T, error) { return fn(), nil })}))
}

// blockingValue unwraps a BlockingFuture's Result for SpawnBlocking: its
// error can only be the pool's refusal, which is re-raised as a panic whose
// value wraps ErrShutdown (the JoinHandle's error then matches it).
type blockingValue[T any] struct{ f *BlockingFuture[T] }

// Poll polls the call and unwraps its Result.
func (v *blockingValue[T]) Poll(cx *future.Context) (T, bool) {
	r, ok := v.f.Poll(cx)
	if !ok {
		var zero T
		return zero, false
	}
	if r.Err != nil {
		panic(r.Err)
	}
	return r.Value, true
}

// Cancel abandons the call (see BlockingFuture.Cancel).
func (v *blockingValue[T]) Cancel() { v.f.Cancel() }
