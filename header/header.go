package header

import (
	"fmt"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// Task is the concrete task behind a Header: the scheduler's generic task
// type, which holds the future and its result. It takes the place of a
// vtable: the scheduler sees only *Header and reaches the task through it.
type Task interface {
	// Poll polls the task's future once with cx and reports whether it
	// completed; on completion the task has stored the result for its
	// JoinHandle. It is called by the worker that moved the header to
	// Running, and by nobody else.
	Poll(cx *future.Context) bool
	// Abort cancels the task's future (future.Cancel) and resolves its
	// JoinHandle with err instead of a result. It is called, instead of Poll,
	// by the worker that moved the header to Running when cancellation is
	// effective, and by the scheduler's shutdown for a task that is queued.
	Abort(err error)
	// Scheduler returns where the task goes when a wake moves it out of
	// Idle: Header.Wake calls its Schedule. It must return the same
	// non-nil Scheduler for the task's whole life. The task keeps it (a
	// pointer field of the scheduler's tasks is 8 bytes, where an interface
	// in the Header would take 16 of every task).
	Scheduler() Scheduler
}

// Scheduler is where a woken task goes: Schedule queues h, which a transition
// has just moved from Idle to Scheduled, on some run queue. It must not block
// and may be called by any goroutine (it is how Header.Wake reschedules).
type Scheduler interface {
	Schedule(h *Header)
}

// Header is the type-erased task: the state word, the intrusive link of the
// global queue, and the way back to the task (and through it to its
// scheduler). The scheduler
// embeds one in each task, and every queue, waker and list holds *Header.
//
// A Header is set up by Init before anyone else sees it, and must not be
// copied afterwards.
type Header struct {
	// state is the packed state word. Moved only by the transitions below,
	// each a CAS loop (or one atomic add) on it; sequentially consistent like
	// every sync/atomic operation, which gives every acquire/release pair the
	// transitions need (package doc, "Ordering").
	state atomic.Uint64
	// next is the global queue's link. Owned by the globalq queue holding the
	// header (under its lock); nil whenever the header is in no global queue.
	next *Header
	// task is the concrete task. Set by Init, read-only afterwards.
	task Task
}

// Init sets h up for a new task: lifecycle Idle, reference count 1 (the
// scheduler's) plus 1 if join is true (the JoinHandle's), join interest as
// join says. The caller then schedules it (TransitionToScheduled, then a
// push). Init must be called before h is shared, and only once.
func (h *Header) Init(task Task, join bool) { h.init(Idle, task, join) }

// InitScheduled is Init for a task that its spawner pushes to a run queue
// right away: the lifecycle starts at Scheduled, which saves the
// TransitionToScheduled (a compare-and-swap) of every spawn. The caller
// must then push h, or claim it with TransitionToShutdown if it cannot.
func (h *Header) InitScheduled(task Task, join bool) {
	h.init(Scheduled, task, join)
}

// ReinitScheduled makes h, the header of a task that is Complete and whose
// references were all dropped, the header of a new task of the same kind
// on the same scheduler: Scheduled, with references and join interest as
// InitScheduled sets them; the task and the scheduler set by Init are kept.
// It is for a scheduler that recycles task objects, and the caller must own
// h exclusively (nobody else holds a reference). A Waker of the former task
// still kept somewhere wakes the new one: a spurious wake, which futures
// tolerate, never a lost one. On any other state it panics with
// ErrBadTransition and changes nothing.
func (h *Header) ReinitScheduled(join bool) {
	ref := 1
	if join {
		ref = 2
	}
	next := MakeState(Scheduled, false, false, join, false, 0, ref)
	for {
		cur := h.Load()
		if cur.Lifecycle() != Complete || cur.RefCount() != 0 {
			panic(fmt.Errorf("%w: reinit from %v", ErrBadTransition, cur))
		}
		if h.cas(cur, next) {
			return
		}
	}
}

// init is Init with the first lifecycle l.
func (h *Header) init(l Lifecycle, task Task, join bool) {
	if task == nil || task.Scheduler() == nil {
		panic(ErrNilTask)
	}
	ref := 1
	if join {
		ref = 2
	}
	h.state.Store(uint64(MakeState(l, false, false, join, false, 0, ref)))
	h.task = task
}

// Load returns the current state word. Any goroutine may call it; the answer
// may be stale as soon as it returns.
func (h *Header) Load() State { return State(h.state.Load()) }

// Task returns the concrete task set by Init.
func (h *Header) Task() Task { return h.task }

// Waker returns the Waker of this task: waking it is h.Wake. It is built
// on each call rather than kept in the Header, which saves every task 16
// bytes for about 2 ns per call (waker.New's check of the pointer's type;
// BenchmarkWaker).
func (h *Header) Waker() waker.Waker { return waker.New(h) }

// QueueNext returns the address of the global queue's link, which makes
// *Header a globalq.Node.
func (h *Header) QueueNext() **Header { return &h.next }

// Wake is the task's wake: TransitionToScheduled, and if that moved the
// task from Idle, its scheduler's Schedule. Any goroutine may call it, any
// number of times; a wake of a scheduled or running task sets the notified
// bit, and a wake of a complete task does nothing. It makes *Header a
// waker.Wakeable.
func (h *Header) Wake() {
	if h.TransitionToScheduled() == ScheduleEnqueue {
		h.task.Scheduler().Schedule(h)
	}
}

// cas moves the state word from old to new with one compare-and-swap.
func (h *Header) cas(old, new State) bool {
	return h.state.CompareAndSwap(uint64(old), uint64(new))
}

// ScheduleResult says what TransitionToScheduled did.
type ScheduleResult uint8

const (
	// ScheduleEnqueue: the task was Idle and is now Scheduled; the caller
	// must push it to a run queue.
	ScheduleEnqueue ScheduleResult = iota + 1
	// ScheduleNotified: the task was Scheduled or Running; its notified bit is
	// set and whoever runs it polls it again. The caller does nothing.
	ScheduleNotified
	// ScheduleComplete: the task is complete; the wake is ignored.
	ScheduleComplete
)

// TransitionToScheduled is the wake transition: Idle becomes Scheduled
// (ScheduleEnqueue), Scheduled and Running gain the notified bit
// (ScheduleNotified), Complete is left alone (ScheduleComplete). Any goroutine
// may call it.
func (h *Header) TransitionToScheduled() ScheduleResult {
	for {
		cur := h.Load()
		var next State
		var res ScheduleResult
		switch cur.Lifecycle() {
		case Idle:
			next, res = cur.withLifecycle(Scheduled)&^notifiedBit, ScheduleEnqueue
		case Scheduled, Running:
			if cur.Notified() {
				return ScheduleNotified // nothing to write
			}
			next, res = cur|notifiedBit, ScheduleNotified
		default:
			return ScheduleComplete
		}
		if h.cas(cur, next) {
			return res
		}
	}
}

// RunResult says what TransitionToRunning did.
type RunResult uint8

const (
	// RunPoll: the task is Running; the caller polls it.
	RunPoll RunResult = iota + 1
	// RunAbort: the task is Running but its cancellation is effective; the
	// caller aborts it (Task.Abort) instead of polling, then completes it.
	RunAbort
)

// TransitionToRunning moves a Scheduled task to Running, clears its
// notified bit (a wake from now on is a wake during the poll) and counts
// the poll (State.Polls). It is called
// only by the worker that popped h from a run queue; a task in any other
// lifecycle is a broken invariant of the scheduler and panics with
// ErrBadTransition.
func (h *Header) TransitionToRunning() RunResult {
	for {
		cur := h.Load()
		if cur.Lifecycle() != Scheduled {
			panic(fmt.Errorf("%w: to running from %v", ErrBadTransition, cur))
		}
		next := cur.withLifecycle(Running)&^(notifiedBit|pollsMask) | (cur+1)&pollsMask
		if h.cas(cur, next) {
			if cur.CancellationEffective() {
				return RunAbort
			}
			return RunPoll
		}
	}
}

// IdleResult says what TransitionToIdle did.
type IdleResult uint8

const (
	// IdleWaiting: the task is Idle, waiting for a wake.
	IdleWaiting IdleResult = iota + 1
	// IdleReschedule: a wake arrived during the poll (the notified bit was
	// set); the task went straight back to Scheduled, with the bit cleared,
	// and the caller must push it to a run queue. This is the rule that loses
	// no wakeup (package doc, "The notified bit").
	IdleReschedule
	// IdleAbort: cancellation became effective during the poll; the task
	// stays Running and the caller aborts it, then completes it.
	IdleAbort
)

// TransitionToIdle is called by the worker after a poll that returned
// not-ready. In one CAS it reads and clears the notified bit and leaves
// Running: for Idle (IdleWaiting), or for Scheduled when a wake came during
// the poll (IdleReschedule). If cancellation is effective the task stays
// Running (IdleAbort). Called on a task that is not Running it panics with
// ErrBadTransition.
func (h *Header) TransitionToIdle() IdleResult { return h.leaveRunning(false, "idle") }

// TransitionToYielded is TransitionToIdle for a poll that yielded: the task
// goes back to Scheduled (IdleReschedule) whether or not its notified bit
// was set, and the bit is cleared; if cancellation is effective it stays
// Running (IdleAbort). It is how an executor reschedules a task whose yield
// woke nothing (future.Context.Yield) in the one compare-and-swap a wake
// and a TransitionToIdle would have taken two for. Called on a task that
// is not Running it panics with ErrBadTransition.
func (h *Header) TransitionToYielded() IdleResult { return h.leaveRunning(true, "yielded") }

// leaveRunning is TransitionToIdle, and TransitionToYielded when reschedule
// is true (as if the notified bit were set); to names the transition in
// the panic.
func (h *Header) leaveRunning(reschedule bool, to string) IdleResult {
	for {
		cur := h.Load()
		if cur.Lifecycle() != Running {
			panic(fmt.Errorf("%w: to %s from %v", ErrBadTransition, to, cur))
		}
		if cur.CancellationEffective() {
			return IdleAbort
		}
		next, res := cur.withLifecycle(Idle), IdleWaiting
		if reschedule || cur.Notified() {
			next, res = cur.withLifecycle(Scheduled)&^notifiedBit, IdleReschedule
		}
		if h.cas(cur, next) {
			return res
		}
	}
}

// TransitionToComplete moves a Running task to Complete and returns the state
// before, whose JoinInterest and Detached tell the caller whether anyone
// will collect the result. The notified bit is cleared: no wake matters any
// more. Called on a task that is not Running it panics with ErrBadTransition.
func (h *Header) TransitionToComplete() State {
	for {
		cur := h.Load()
		if cur.Lifecycle() != Running {
			panic(fmt.Errorf("%w: to complete from %v", ErrBadTransition, cur))
		}
		if h.cas(cur, cur.withLifecycle(Complete)&^notifiedBit) {
			return cur
		}
	}
}

// TransitionToCompleteAndUnref is TransitionToComplete followed by Unref,
// in one compare-and-swap: it moves a Running task to Complete, clears the
// notified bit, drops one reference (the scheduler's) and returns the state
// before. The caller knows it dropped the last reference when the state
// before had a count of 1. Called on a task that is not Running, or whose
// count is zero, it panics with ErrBadTransition.
func (h *Header) TransitionToCompleteAndUnref() State {
	for {
		cur := h.Load()
		if cur.Lifecycle() != Running || cur.RefCount() == 0 {
			panic(fmt.Errorf("%w: to complete and unref from %v", ErrBadTransition, cur))
		}
		if h.cas(cur, cur.withLifecycle(Complete)&^notifiedBit-refOne) {
			return cur
		}
	}
}

// SetJoinWaiter sets the join-waiter bit, which tells the completion that
// an awaiter of the JoinHandle registered a Waker, and reports false; or,
// if the task is already Complete, changes nothing and reports true (the
// awaiter then takes the outcome instead of waiting). Any goroutine may
// call it; the bit is never cleared (a later wake of a stale Waker is
// spurious, and harmless).
func (h *Header) SetJoinWaiter() (complete bool) {
	for {
		cur := h.Load()
		if cur.Lifecycle() == Complete {
			return true
		}
		if cur.JoinWaiter() || h.cas(cur, cur|joinWaiterBit) {
			return false
		}
	}
}

// CancelResult says what Cancel did.
type CancelResult uint8

const (
	// CancelEnqueue: the task was Idle with no shield; it is now Scheduled
	// with the cancelled bit, and the caller must push it to a run queue so
	// that a worker aborts it.
	CancelEnqueue CancelResult = iota + 1
	// CancelDeferred: the cancelled bit is set and a worker will act on it:
	// the task is queued (its TransitionToRunning aborts it), running (its
	// TransitionToIdle aborts it), or shielded (the poll that removes the
	// last shield makes it effective).
	CancelDeferred
	// CancelNoop: the task was already cancelled or is complete.
	CancelNoop
)

// Cancel requests cancellation. Any goroutine may call it, any number of
// times; see CancelResult for what the caller must do.
func (h *Header) Cancel() CancelResult {
	for {
		cur := h.Load()
		if cur.Cancelled() || cur.Lifecycle() == Complete {
			return CancelNoop
		}
		next, res := cur|cancelledBit, CancelDeferred
		if cur.Lifecycle() == Idle && cur.ShieldDepth() == 0 {
			next, res = next.withLifecycle(Scheduled), CancelEnqueue
		}
		if h.cas(cur, next) {
			return res
		}
	}
}

// AddShield defers cancellation until the matching RemoveShield: while any
// shield is in force, a requested cancellation does not take effect. Shields
// nest up to MaxShieldDepth; one more returns an error wrapping
// ErrShieldOverflow and changes nothing. It is meant to be called from the
// task's own poll.
func (h *Header) AddShield() error {
	for {
		cur := h.Load()
		if cur.ShieldDepth() == MaxShieldDepth {
			return fmt.Errorf("%w: depth %d", ErrShieldOverflow, MaxShieldDepth)
		}
		if h.cas(cur, cur+shieldOne) {
			return nil
		}
	}
}

// RemoveShield removes one shield and reports whether cancellation is now
// effective (it was requested and this was the last shield): the worker
// polling the task then aborts it when the poll returns. With no shield in
// force it returns an error wrapping ErrShieldUnderflow and changes nothing.
func (h *Header) RemoveShield() (effective bool, err error) {
	for {
		cur := h.Load()
		if cur.ShieldDepth() == 0 {
			return false, ErrShieldUnderflow
		}
		next := cur - shieldOne
		if h.cas(cur, next) {
			return next.CancellationEffective(), nil
		}
	}
}

// Ref adds a reference. At MaxRefCount it returns an error wrapping
// ErrRefOverflow and changes nothing. Any goroutine may call it.
func (h *Header) Ref() error {
	for {
		cur := h.Load()
		if cur.RefCount() == MaxRefCount {
			return fmt.Errorf("%w: %d references", ErrRefOverflow, MaxRefCount)
		}
		if h.cas(cur, cur+refOne) {
			return nil
		}
	}
}

// Unref drops a reference and reports whether it was the last, in which case
// the caller releases what the task still holds (its result): see the package
// doc, "Reference count". Dropping a reference that nobody holds panics with
// ErrBadTransition: it means some owner dropped twice. Any goroutine may call
// it.
func (h *Header) Unref() (last bool) {
	for {
		cur := h.Load()
		if cur.RefCount() == 0 {
			panic(fmt.Errorf("%w: unref at zero (%v)", ErrBadTransition, cur))
		}
		if h.cas(cur, cur-refOne) {
			return cur.RefCount() == 1
		}
	}
}

// Detach clears join interest and sets the detached bit, for a JoinHandle
// that gives up its result; it returns the state before. A task detached
// after it completed still holds its result, which the caller then releases.
// Detaching twice changes nothing the second time.
func (h *Header) Detach() State {
	for {
		cur := h.Load()
		next := cur&^joinInterestBit | detachedBit
		if cur == next || h.cas(cur, next) {
			return cur
		}
	}
}

// Scheduler returns the task's Scheduler (Task.Scheduler), so that a
// scheduler can tell its own tasks from another's.
func (h *Header) Scheduler() Scheduler { return h.task.Scheduler() }

// TransitionToShutdown is the shutdown's claim on a task no worker will run
// again: it sets the cancelled bit and, if the task is Idle or Scheduled
// (waiting, or woken but left in no queue because the queues are closed),
// moves it to Running and reports true; the caller then aborts it (Task.Abort)
// and completes it. Shields are ignored: shutdown does not wait for them. It
// reports false, changing only the cancelled bit, for a task that is Running
// (a worker still owns it) or Complete.
func (h *Header) TransitionToShutdown() bool {
	for {
		cur := h.Load()
		switch cur.Lifecycle() {
		case Idle, Scheduled:
			if h.cas(cur, cur.withLifecycle(Running)&^notifiedBit|cancelledBit) {
				return true
			}
		case Running:
			if cur.Cancelled() || h.cas(cur, cur|cancelledBit) {
				return false
			}
		default:
			return false
		}
	}
}
