package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
)

// Shields: a section of a task that a cancel does not cut. Shield polls its
// future under a shield of the polling task's header (header.AddShield):
// a cancel requested meanwhile only sets the task's cancelled bit, and the
// task is aborted at the end of the poll that removes its last shield
// (header.RemoveShield reports it effective; the worker's TransitionToIdle
// then answers IdleAbort). The shutdown honours shields for as long as its
// context allows (shieldGrace), then cuts what is left.

// ErrShieldDepth is the panic of a Shield nested deeper than
// header.MaxShieldDepth in one task.
var ErrShieldDepth = errors.New("scheduler: shields nested too deep")

// Shield returns a future of f's value that a cancel of the task polling it
// does not interrupt: a JoinHandle.Cancel, a JoinSet's or a scope's cancel,
// or the runtime's shutdown (for as long as Shutdown's context allows)
// requested while f runs takes effect when f completes, at the task's next
// suspension, and the task then ends cancelled. A shield whose first poll
// comes after its task's cancel, outside any other shield of the task,
// does not start f: the task ends at the end of that poll, so that a loop
// of shielded sections stops between two of them. Shields nest (up to
// header.MaxShieldDepth in one task; one more panics with ErrShieldDepth).
//
// A shield protects against the cancel of the task, not against the
// future that owns it: a Timeout, a select or a JoinSet that drops the
// shielded future cancels f as it would any future. Outside a task of a
// Scheduler (a BlockOn's goroutine) Shield polls f and protects nothing.
func Shield[T any](f future.Future[T]) *ShieldFuture[T] {
	return &ShieldFuture[T]{f: f}
}

// ShieldFuture is Shield's future.
type ShieldFuture[T any] struct {
	f future.Future[T]
	// h is the header of the task whose shield this future holds, nil
	// before the first poll inside a task, when f completes and after a
	// cancel. Owned by the task polling it.
	h *header.Header
	// started says the shield was taken or found impossible (outside a task).
	started bool
}

// Poll polls f under the shield, taken at the first poll.
func (s *ShieldFuture[T]) Poll(cx *future.Context) (T, bool) {
	if !s.started {
		if h, ok := cx.Task().(*header.Header); ok && cx.Executor() != nil {
			if h.Load().CancellationEffective() {
				// The task's cancel came first (in an earlier section, or
				// in this poll): the section does not start, and the
				// worker aborts the task when this poll returns.
				var zero T
				return zero, false
			}
			if err := h.AddShield(); err != nil {
				panic(fmt.Errorf("%w: %w", ErrShieldDepth, err))
			}
			s.h = h
			if _, ours := cx.Executor().(*Scheduler); ours {
				// Listed now rather than at the end of the poll: a
				// shutdown that starts during a first poll finds the
				// shield (shieldedTasks) and honours it.
				taskOf(h).pending(cx)
			}
		}
		s.started = true
	}
	v, ok := s.f.Poll(cx)
	if ok {
		s.release()
	}
	return v, ok
}

// Cancel cancels f and gives the shield up.
func (s *ShieldFuture[T]) Cancel() {
	if c, ok := s.f.(future.Canceler); ok {
		c.Cancel()
	}
	s.release()
}

// release removes the shield, once.
func (s *ShieldFuture[T]) release() {
	if h := s.h; h != nil {
		s.h = nil
		_, _ = h.RemoveShield() // the worker acts on an effective cancel after the poll
	}
}

var (
	_ future.Future[int] = (*ShieldFuture[int])(nil)
	_ future.Canceler    = (*ShieldFuture[int])(nil)
)

// shieldState is the shutdown's record of the shields it honoured.
type shieldState struct {
	// once runs the grace (AwaitShields) a single time.
	once sync.Once
	// cut counts the shielded tasks the shutdown found still shielded when
	// its grace ended: written by the grace, before graceOver closes; read
	// by Stats and Shutdown.
	cut atomic.Uint64
	// graceOver is closed when the grace ended (no task shielded any more,
	// or its context ended), after cut is final. Immutable once made by
	// New.
	graceOver chan struct{}
}

// AwaitShields is the first phase of the shutdown, for a runtime that must
// keep its services (timers, I/O) running while shielded tasks finish: it
// cancels every task in a shield (Shield) and waits, the scheduler running
// on, until none is in one any more or ctx ends, and returns how many it
// had to leave shielded (for Shutdown to cut). It runs once: a later call,
// and Shutdown, wait for the first one's end (or their own ctx's, then
// reporting the tasks still shielded as 0 cut so far). Any goroutine but a
// worker's may call it; on a worker it returns 0 at once.
func (s *Scheduler) AwaitShields(ctx context.Context) int {
	if OnWorker() || s.driven != nil { // a driven scheduler's Shutdown cuts them
		return 0
	}
	s.shields.once.Do(func() {
		s.shields.cut.Store(uint64(s.shieldGrace(ctx)))
		close(s.shields.graceOver)
	})
	select {
	case <-s.shields.graceOver:
		return int(s.shields.cut.Load())
	case <-ctx.Done():
		return 0
	}
}

// shieldPollEvery is how often the shutdown looks again for shielded
// tasks while it waits for them.
const shieldPollEvery = 2 * time.Millisecond

// shieldedTasks cancels every linked task in a shield (the cancel takes
// effect when the shield ends) and returns how many there were.
func (s *Scheduler) shieldedTasks() int {
	n := 0
	for i := range s.owned.shards {
		sh := &s.owned.shards[i]
		sh.mu.Lock()
		for t := sh.head; t != nil; t = t.next {
			st := t.Header.Load()
			if st.ShieldDepth() == 0 || st.Lifecycle() == header.Complete {
				continue
			}
			n++
			if t.Header.Cancel() == header.CancelEnqueue { // its shield ended since the load
				s.Schedule(&t.Header)
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// shieldGrace is the first phase of the shutdown: while some task is in a
// shield, the runtime runs on (the shielded tasks are cancelled, and end
// when their shields do), until none is or ctx ends. It returns the number
// of shielded tasks it had to cut. Called by the shutdown goroutine.
func (s *Scheduler) shieldGrace(ctx context.Context) (cut int) {
	n := s.shieldedTasks()
	if n == 0 {
		return 0
	}
	tick := time.NewTicker(shieldPollEvery)
	defer tick.Stop()
	for n > 0 {
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
			n = s.shieldedTasks()
		}
	}
	return 0
}
