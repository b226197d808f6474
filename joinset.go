package blitz

// JoinSet: a set of tasks awaited in the order they finish.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// ErrJoinSetEmpty is the error of Next (and of WaitNext) on a JoinSet that
// holds no task: every task spawned into it was already returned. It is the
// "no more" outcome of a loop over Next, never the error of a task.
var ErrJoinSetEmpty = errors.New("blitz: join set is empty")

// JoinSet is a set of tasks of the same result type, awaited in the order
// they finish. Spawn tasks into it (Spawn from a task, SpawnOn from a
// goroutine); await the next to finish with Next (a future, for tasks) or
// WaitNext (for goroutines); collect what is left with All or WaitAll;
// cancel them with CancelAll. A task's outcome is reported once, by the
// Next that returns it, as its JoinHandle would: its value, or an error
// matching ErrCancelled, ErrShutdown or ErrPanicked (a *PanicError). Once
// Next returned a task's outcome, the set holds nothing of it.
//
// Go has no destructor, so a task that owns a set and is cancelled stops the
// set's tasks by calling Close in its own Cancel: Close cancels every task
// in the set and every task spawned into it afterwards.
//
// The zero JoinSet is empty and ready to use; it must not be copied after
// first use. Any goroutine or task may spawn into it and call Len,
// CancelAll and Close, and several may await Next at once: each finished
// task wakes one of them, in the order they started waiting.
type JoinSet[T any] struct {
	_  noCopy
	mu sync.Mutex
	// head is the list of the tasks in the set (spawned and not yet
	// returned by Next), linked through joinEntry.prev/next; n counts them.
	// Guarded by mu.
	head *joinEntry[T]
	n    int
	// ready holds the entries whose task finished (their waker fired), in
	// the order they finished, not yet returned by Next. Guarded by mu.
	ready []*joinEntry[T]
	// waiters are the pending Nexts, in the order they started waiting.
	// Next's Poll appends itself when it finds nothing ready; the entry that
	// makes the set ready takes the first (and wakes it outside mu); a Next
	// cancelled after its wake passes the wake on (Cancel). Guarded by mu.
	waiters []*JoinNextFuture[T]
	// closed is set once, by Close: later spawns are cancelled at once.
	// Guarded by mu.
	closed bool
}

// joinEntry is one task of a set. It is the Wakeable registered on the
// task's JoinHandle, so the task's completion pushes it onto the set's
// ready list: the set never polls a task that has not finished.
type joinEntry[T any] struct {
	s *JoinSet[T]
	h JoinHandle[T]
	// cx is the Context whose Waker (this entry) the handle is polled with.
	// Written once by add before the entry is published; read under s.mu.
	cx future.Context
	// prev and next link the set's list; queued is set while the entry is in
	// ready; removed once Next returned its outcome. Guarded by s.mu.
	prev, next *joinEntry[T]
	queued     bool
	removed    bool
}

// Wake moves the entry to the set's ready list and wakes the pending Next.
// The task's completion calls it, on whatever goroutine finished the task
// (never with the task's lock held), and so may a spurious wake; a second
// wake before Next took the entry does nothing.
func (e *joinEntry[T]) Wake() {
	s := e.s
	s.mu.Lock()
	w := s.pushReadyLocked(e)
	s.mu.Unlock()
	w.Wake()
}

// pushReadyLocked queues e as ready unless it is queued or gone, and returns
// the Waker of the pending Next to wake (zero if none). s.mu must be held.
func (s *JoinSet[T]) pushReadyLocked(e *joinEntry[T]) waker.Waker {
	if e.queued || e.removed {
		return waker.Waker{}
	}
	e.queued = true
	s.ready = append(s.ready, e)
	return s.popWaiterLocked()
}

// popWaiterLocked takes the first pending Next off the waiters and returns
// its Waker (zero if none waits). s.mu must be held.
func (s *JoinSet[T]) popWaiterLocked() waker.Waker {
	if len(s.waiters) == 0 {
		return waker.Waker{}
	}
	f := s.waiters[0]
	s.waiters[0] = nil
	s.waiters = s.waiters[1:]
	f.waiting = false
	return f.wk
}

// wakeAllWaitersLocked takes every pending Next off the waiters and returns
// their Wakers: the set became empty, and each must see it. s.mu must be
// held.
func (s *JoinSet[T]) wakeAllWaitersLocked() []waker.Waker {
	var ws []waker.Waker
	for len(s.waiters) > 0 {
		ws = append(ws, s.popWaiterLocked())
	}
	return ws
}

// Spawn starts f as a task on the runtime polling cx (see the function
// Spawn) and adds it to the set. Called from inside a task; from a
// goroutine use SpawnOn. On a closed set the task is cancelled at once and
// its outcome is reported by Next like any other.
func (s *JoinSet[T]) Spawn(cx *future.Context, f future.Future[T]) {
	s.add(Spawn(cx, f))
}

// SpawnOn starts f as a task on h's runtime (see the function SpawnOn) and
// adds it to the set. Any goroutine may call it. On a closed set the task is
// cancelled at once and its outcome is reported by Next like any other.
func (s *JoinSet[T]) SpawnOn(h Handle, f future.Future[T]) {
	s.add(SpawnOn(h, f))
}

// add puts the task of h into the set and registers the entry on h, which
// fires at once if the task already finished.
func (s *JoinSet[T]) add(h JoinHandle[T]) {
	e := &joinEntry[T]{s: s, h: h}
	e.cx.Reset(waker.New(e), nil, nil, future.NoWorker)
	s.mu.Lock()
	e.next = s.head
	if s.head != nil {
		s.head.prev = e
	}
	s.head = e
	s.n++
	closed := s.closed
	// Lock order: s.mu, then the task's own lock inside Poll. The task's
	// completion wakes the entry after releasing its lock, so Wake taking
	// s.mu cannot deadlock with this.
	var w waker.Waker
	if _, done := h.Poll(&e.cx); done {
		w = s.pushReadyLocked(e)
	}
	s.mu.Unlock()
	w.Wake()
	if closed {
		h.Cancel()
	}
}

// removeLocked takes e out of the set. s.mu must be held.
func (s *JoinSet[T]) removeLocked(e *joinEntry[T]) {
	e.removed = true
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.prev, e.next = nil, nil
	s.n--
}

// Len returns the number of tasks in the set: spawned and not yet returned
// by Next, finished or not. Any goroutine may call it.
func (s *JoinSet[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// CancelAll cancels every task in the set (see JoinHandle.Cancel). They stay
// in the set: Next reports each one's outcome, ErrCancelled for those the
// cancellation stopped, the value or error of those that finished first.
// Any goroutine or task may call it.
func (s *JoinSet[T]) CancelAll() {
	s.mu.Lock()
	hs := make([]JoinHandle[T], 0, s.n)
	for e := s.head; e != nil; e = e.next {
		hs = append(hs, e.h)
	}
	s.mu.Unlock()
	for _, h := range hs { // outside mu: Cancel may schedule the task
		h.Cancel()
	}
}

// Close cancels every task in the set, as CancelAll, and every task spawned
// into it from now on. It is what the Cancel of a future that owns a set
// calls, so that cancelling the owner cancels its tasks. Next still reports
// the outcomes. Idempotent; any goroutine or task may call it.
func (s *JoinSet[T]) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.CancelAll()
}

// Next returns a future of the outcome of the next task of the set to
// finish, in the order they finish; it removes that task from the set. On a
// set that holds no task it completes with an error matching
// ErrJoinSetEmpty. A task that finishes while the future is pending wakes
// it. Cancelling the future (future.Cancel) removes nothing from the set.
func (s *JoinSet[T]) Next() *JoinNextFuture[T] { return &JoinNextFuture[T]{s: s} }

// JoinNextFuture is the future of JoinSet.Next; it is a
// future.Future[future.Result[T]] and a future.Canceler.
type JoinNextFuture[T any] struct {
	s *JoinSet[T]
	// wk is the Waker of this future's last Poll that waited; waiting is set
	// while the future is in s.waiters. Guarded by s.mu.
	wk      waker.Waker
	waiting bool
	done    bool
}

// Poll returns the outcome of a finished task, ErrJoinSetEmpty if the set
// holds none, or registers cx's Waker to be woken by the next task to
// finish. Polling after completion panics with
// future.ErrPolledAfterCompletion.
func (f *JoinNextFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if !cx.Proceed() {
		return future.Result[T]{}, false // the task's budget is spent: it yields
	}
	s := f.s
	s.mu.Lock()
	r, done, wake := f.pollLocked(cx)
	s.mu.Unlock()
	for _, w := range wake {
		w.Wake()
	}
	if done {
		cx.Spend()
	} else {
		cx.Waiting(waitJoinNext, 0) // for a task dump
	}
	return r, done
}

// waitJoinNext is what a task waiting in JoinSet.Next waits on, for a task
// dump (future.Context.Waiting).
var waitJoinNext = future.NewWaitKind("JoinSet.Next", future.WaitNoObject)

// pollLocked is Poll under s.mu; it returns the Wakers of the other pending
// Nexts to wake when this poll took the set's last task. s.mu must be held.
func (f *JoinNextFuture[T]) pollLocked(cx *future.Context) (future.Result[T], bool, []waker.Waker) {
	s := f.s
	for len(s.ready) > 0 {
		e := s.ready[0]
		s.ready[0] = nil
		s.ready = s.ready[1:]
		e.queued = false
		// Polled with the entry's own Context: a spurious wake leaves the
		// entry registered again, to be queued when the task finishes.
		if r, ok := e.h.Poll(&e.cx); ok {
			s.removeLocked(e)
			f.finishLocked()
			var wake []waker.Waker
			if s.n == 0 {
				wake = s.wakeAllWaitersLocked() // they wait for tasks that no longer exist
			}
			return r, true, wake
		}
	}
	if s.n == 0 {
		f.finishLocked()
		return future.Fail[T](ErrJoinSetEmpty), true, nil
	}
	f.wk = cx.Waker()
	if !f.waiting {
		f.waiting = true
		s.waiters = append(s.waiters, f)
	}
	return future.Result[T]{}, false, nil
}

// finishLocked marks f complete and withdraws its Waker. s.mu must be held.
func (f *JoinNextFuture[T]) finishLocked() {
	f.done = true
	f.cancelLocked()
}

// cancelLocked takes f off the set's waiters if it is there. s.mu must be
// held.
func (f *JoinNextFuture[T]) cancelLocked() {
	if f.waiting {
		f.s.waiters = slices.DeleteFunc(f.s.waiters, func(w *JoinNextFuture[T]) bool { return w == f })
		f.waiting = false
	}
	f.wk = waker.Waker{}
}

// Cancel withdraws the pending wait; no task leaves the set. A Next that
// was woken for a finished task and is cancelled before taking it passes
// the wake on to the next waiter, so that no finished task is left with
// every waiter asleep. It makes JoinNextFuture a future.Canceler.
// Idempotent.
func (f *JoinNextFuture[T]) Cancel() {
	s := f.s
	s.mu.Lock()
	wasWoken := !f.waiting && !f.wk.IsZero() && !f.done
	f.cancelLocked()
	var w waker.Waker
	if wasWoken && len(s.ready) > 0 {
		w = s.popWaiterLocked()
	}
	s.mu.Unlock()
	w.Wake()
}

// All returns a future of the outcomes of every task in the set, in the
// order they finish, completing when the set is empty (tasks spawned into
// the set before then are waited for too). Cancelling it withdraws the
// wait; the outcomes it had already taken from the set are dropped, so
// cancel it only together with the set (Close).
func (s *JoinSet[T]) All() future.Future[[]future.Result[T]] {
	return &joinAllFuture[T]{s: s}
}

// joinAllFuture is the future of JoinSet.All: Next in a loop.
type joinAllFuture[T any] struct {
	s    *JoinSet[T]
	next *JoinNextFuture[T]
	out  []future.Result[T]
}

// Poll collects outcomes until the set is empty.
func (a *joinAllFuture[T]) Poll(cx *future.Context) ([]future.Result[T], bool) {
	for {
		if a.next == nil {
			a.next = a.s.Next()
		}
		r, ok := a.next.Poll(cx)
		if !ok {
			return nil, false
		}
		a.next = nil
		if errors.Is(r.Err, ErrJoinSetEmpty) {
			out := a.out
			a.out = nil
			return out, true
		}
		a.out = append(a.out, r)
	}
}

// Cancel withdraws the pending wait.
func (a *joinAllFuture[T]) Cancel() {
	if a.next != nil {
		a.next.Cancel()
		a.next = nil
	}
}

// Values returns a future of the values of every task in the set, in the
// order they finish, completing when the set is empty; or, at the first
// task that fails (it panicked, was cancelled, or was refused at spawn),
// with that task's error, after cancelling the other tasks of the set as
// CancelAll does (they stay in the set, and Next reports their outcomes).
// It is errgroup's Wait for a set of tasks, with their values. Cancelling
// the future withdraws the wait; values it had already taken from the set
// are dropped, as with All.
func (s *JoinSet[T]) Values() future.Future[future.Result[[]T]] {
	return &joinValuesFuture[T]{s: s}
}

// joinValuesFuture is the future of JoinSet.Values: Next in a loop, until
// the set is empty or a task fails.
type joinValuesFuture[T any] struct {
	s    *JoinSet[T]
	next *JoinNextFuture[T]
	out  []T
}

// Poll collects values until the set is empty or a task fails.
func (a *joinValuesFuture[T]) Poll(cx *future.Context) (future.Result[[]T], bool) {
	for {
		if a.next == nil {
			a.next = a.s.Next()
		}
		r, ok := a.next.Poll(cx)
		if !ok {
			return future.Result[[]T]{}, false
		}
		a.next = nil
		switch {
		case errors.Is(r.Err, ErrJoinSetEmpty):
			out := a.out
			a.out = nil
			return future.Ok(out), true
		case r.Err != nil:
			a.out = nil
			a.s.CancelAll()
			return future.Fail[[]T](r.Err), true
		}
		a.out = append(a.out, r.Value)
	}
}

// Cancel withdraws the pending wait.
func (a *joinValuesFuture[T]) Cancel() {
	if a.next != nil {
		a.next.Cancel()
		a.next = nil
	}
}

// WaitNext blocks the calling goroutine until a task of the set finishes and
// returns its value or error, removing it from the set; on an empty set it
// returns an error matching ErrJoinSetEmpty at once. If ctx ends first it
// returns an error wrapping ctx's cause and the set keeps its tasks. Called
// from a task it would block a worker: it then returns an error wrapping
// ErrBlockingInTask unless a task already finished; tasks await Next.
func (s *JoinSet[T]) WaitNext(ctx context.Context) (T, error) {
	r, err := waitFuture(ctx, s.Next())
	if err != nil {
		var zero T
		return zero, fmt.Errorf("blitz: JoinSet.WaitNext: %w", err)
	}
	return r.Value, r.Err
}

// WaitAll blocks the calling goroutine until every task of the set finished
// and returns their outcomes in the order they finished. If ctx ends first
// it returns the outcomes collected so far (removed from the set) and an
// error wrapping ctx's cause; the other tasks stay in the set, running.
// Called from a task it returns an error wrapping ErrBlockingInTask unless
// it could finish without waiting; tasks await All.
func (s *JoinSet[T]) WaitAll(ctx context.Context) ([]future.Result[T], error) {
	var out []future.Result[T]
	for {
		r, err := waitFuture(ctx, s.Next())
		if err != nil {
			return out, fmt.Errorf("blitz: JoinSet.WaitAll: %w", err)
		}
		if errors.Is(r.Err, ErrJoinSetEmpty) {
			return out, nil
		}
		out = append(out, r)
	}
}

// waitFuture polls f on the calling goroutine until it completes, f needing
// no runtime service (future.Block does the waiting); it first refuses to
// block a worker (ErrBlockingInTask) and cancels f when ctx ends.
func waitFuture[T any](ctx context.Context, f future.Future[T]) (T, error) {
	if v, ok := f.Poll(future.NewContext(waker.Waker{})); ok {
		return v, nil
	}
	if scheduler.OnWorker() {
		future.Cancel(f)
		var zero T
		return zero, ErrBlockingInTask
	}
	return future.Block(ctx, f) // polls again with a Waker of its own, which replaces the first
}
