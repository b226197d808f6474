package syncprim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// Notify's state word: the low two bits are the mode, the rest counts the
// NotifyWaiters calls (the generation).
const (
	notifyEmpty    uint64 = 0 // no permit, nobody waiting
	notifyWaiting  uint64 = 1 // the waiter list is not empty (so no permit)
	notifyNotified uint64 = 2 // one permit stored, nobody waiting
	notifyModeMask uint64 = 3
	notifyGenStep  uint64 = 4
)

// What a waking party handed a Notify waiter, in its Waiter's Value.
const (
	notifyByNone notifyKind = iota // not woken
	notifyByOne                    // NotifyOne's notification: pass it on if unused
	notifyByAll                    // NotifyWaiters: nothing to pass on
)

type notifyKind uint8

// Notify wakes waiting tasks and goroutines without carrying data, with
// Tokio's semantics. The zero Notify is ready to use; it must not be copied
// after first use.
//
// NotifyOne wakes the first waiter (FIFO over tasks and goroutines), or,
// if nobody waits, stores one permit that the next Notified, NotifiedBlocking
// or TryNotified consumes at once; permits do not accumulate beyond one.
// NotifyWaiters wakes every current waiter and stores no permit.
//
// # Protocol
//
// An atomic state word holds the mode (empty, waiting, notified: one
// permit stored) and a generation, the number of NotifyWaiters calls. A
// mutex guards the waiter list, and the mode is "waiting" exactly when the
// list is not empty. With nobody waiting, NotifyOne (empty to notified) and
// TryNotified (notified to empty) are a CAS on the state word and never
// lock; every transition into or out of "waiting", and every generation
// increment, happens under the mutex, so a waiter that checks the state and
// queues in one critical section cannot miss a notification.
//
// A NotifiedFuture records the generation when it is made, not when first
// polled, so the classic pattern "make the future, check the condition,
// then await it" cannot miss a NotifyWaiters that falls between the check
// and the first poll: the first poll sees the generation moved and
// completes. NotifyOne, in contrast, reaches only futures that are queued
// (polled at least once) or leaves its permit for the next one.
//
// NotifyOne hands its notification to the front waiter by unlinking it
// and marking its Waiter; "unlinked means woken" (package waker). If that
// future is cancelled (or the blocking wait's ctx ends) before it returned
// ready, its cancel passes the notification on, to the next waiter or into
// the permit, so that a notification is never lost and never doubled.
// NotifyWaiters unlinks all current waiters into a waker.WakeList under the
// mutex and wakes them after unlocking; a waiter that arrives later is not
// woken, and a cancelled one has nothing to pass on.
type Notify struct {
	// num is the Notify's number in task dumps, taken at its first wait
	// (lockid.go's waitNumber).
	num atomic.Uint64
	_   noCopy

	// state is the mode and generation word. CAS without mu for the
	// empty<->notified transitions; changed only under mu when the mode is
	// or becomes waiting, and for the generation (Add under mu). Loads pair
	// with those CASes and Adds (sequentially consistent atomics).
	state atomic.Uint64

	mu      sync.Mutex
	waiters waker.List[notifyKind] // queued waiters; guarded by mu
}

// NotifyOne wakes the first waiter or, if none waits, stores a permit (if
// one is stored already, nothing changes). With no waiter it allocates
// nothing and takes no lock.
func (n *Notify) NotifyOne() { n.notifyOne() }

// notifyOne is NotifyOne; it reports whether the notification took effect
// (woke a waiter or filled the empty permit slot), for tests.
func (n *Notify) notifyOne() bool {
	for {
		s := n.state.Load()
		switch s & notifyModeMask {
		case notifyNotified:
			return false
		case notifyEmpty:
			if n.state.CompareAndSwap(s, s|notifyNotified) {
				return true
			}
			continue
		}
		n.mu.Lock()
		wk, ok := n.notifyOneLocked()
		n.mu.Unlock()
		wk.Wake()
		return ok
	}
}

// notifyOneLocked delivers one notification under n.mu: it unlinks the
// front waiter, marking it, and returns its Waker for the caller to wake
// after unlocking; or, with nobody waiting, stores the permit. It reports
// whether the notification took effect (false: a permit was stored already).
func (n *Notify) notifyOneLocked() (waker.Waker, bool) {
	for {
		s := n.state.Load()
		switch s & notifyModeMask {
		case notifyWaiting: // only mu holders change the state now
			w := n.waiters.PopFront()
			w.Value = notifyByOne
			if n.waiters.IsEmpty() {
				n.state.Store(s &^ notifyModeMask)
			}
			return w.Waker(), true
		case notifyNotified:
			return waker.Waker{}, false
		default:
			if n.state.CompareAndSwap(s, s|notifyNotified) {
				return waker.Waker{}, true
			}
		}
	}
}

// NotifyWaiters wakes every waiter queued now and every NotifiedFuture made
// before this call, polled or not. It stores no permit and leaves a stored
// one in place. The wakes happen after the mutex is released.
func (n *Notify) NotifyWaiters() {
	var wl waker.WakeList
	n.mu.Lock()
	s := n.state.Add(notifyGenStep)
	if s&notifyModeMask == notifyWaiting {
		wakeEveryWaiter(&n.waiters, notifyByAll, &wl)
		n.state.Store(s &^ notifyModeMask)
	}
	n.mu.Unlock()
	wl.WakeAll()
}

// TryNotified consumes the stored permit and reports whether there was one.
// It never waits, takes no lock and allocates nothing.
func (n *Notify) TryNotified() bool {
	for {
		s := n.state.Load()
		if s&notifyModeMask != notifyNotified {
			return false
		}
		if n.state.CompareAndSwap(s, s&^notifyModeMask) {
			return true
		}
	}
}

// checkLocked is the waiting side's check, under n.mu: it reports true if
// the generation moved from gen or a permit was stored (consuming it);
// otherwise it marks the mode waiting, and the caller must queue at once.
func (n *Notify) checkLocked(gen uint64) bool {
	for {
		s := n.state.Load()
		if s/notifyGenStep != gen {
			return true
		}
		switch s & notifyModeMask {
		case notifyNotified:
			if n.state.CompareAndSwap(s, s&^notifyModeMask) {
				return true
			}
		case notifyWaiting:
			return false
		default:
			if n.state.CompareAndSwap(s, s|notifyWaiting) {
				return false
			}
		}
	}
}

// leaveLocked removes w if it is queued and reports whether it did. If w
// had been handed NotifyOne's notification instead, it passes it on and
// returns the Waker to wake after unlocking. n.mu is held.
func (n *Notify) leaveLocked(w *waker.Waiter[notifyKind]) (bool, waker.Waker) {
	if n.waiters.Remove(w) {
		if n.waiters.IsEmpty() {
			n.state.Store(n.state.Load() &^ notifyModeMask) // waiting -> empty; only mu holders change it
		}
		return true, waker.Waker{}
	}
	if w.Value == notifyByOne {
		w.Value = notifyByNone
		wk, _ := n.notifyOneLocked()
		return false, wk
	}
	return false, waker.Waker{}
}

// Notified returns a future that completes when this Notify is notified:
// by a stored permit or a NotifyOne after its first poll, or by any
// NotifyWaiters after this call (even before the first poll). Embed it in a
// task's state and poll it through a pointer; cancel it if it is abandoned.
func (n *Notify) Notified() *NotifiedFuture {
	return &NotifiedFuture{n: n, gen: n.state.Load() / notifyGenStep}
}

// NotifiedBlocking blocks the calling goroutine until it is notified, as
// Notified. If ctx is done first it returns an error wrapping ctx.Err() and
// passes on a NotifyOne notification it was handed in that race. A stored
// permit wins over a done ctx. In steady state it allocates nothing.
func (n *Notify) NotifiedBlocking(ctx context.Context) error {
	gen := n.state.Load() / notifyGenStep
	if n.TryNotified() {
		return nil
	}
	n.mu.Lock()
	if n.checkLocked(gen) {
		n.mu.Unlock()
		return nil
	}
	bw := getBlockWaiter[notifyKind](&notifyBlockWaiters)
	n.waiters.PushBack(&bw.w, waker.New(&bw.sig))
	n.mu.Unlock()
	defer putBlockWaiter(&notifyBlockWaiters, bw)
	for {
		err := bw.sig.Wait(ctx)
		n.mu.Lock()
		if err != nil {
			_, wk := n.leaveLocked(&bw.w)
			n.mu.Unlock()
			wk.Wake()
			return fmt.Errorf("syncprim: notified: %w", err)
		}
		linked := bw.w.Linked()
		n.mu.Unlock()
		if !linked {
			return nil
		}
	}
}

// waiterCount reports the number of queued waiters, for tests.
func (n *Notify) waiterCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.waiters.Len()
}

// notified future states; the owner's only.
const (
	notifiedStart uint8 = iota
	notifiedWaiting
	notifiedDone
	notifiedCancelled
)

// NotifiedFuture is Notify.Notified's future. Its pointer implements
// future.Future[struct{}] and future.Canceler. It must not be copied after
// its first poll (go vet reports copies).
type NotifiedFuture struct {
	_ noCopy

	n   *Notify                  // set at construction, read-only
	w   waker.Waiter[notifyKind] // in n.waiters while waiting; guarded by n.mu
	gen uint64                   // NotifyWaiters generation at construction; read-only
	st  uint8                    // notified future state; owner only
}

var _ future.Future[struct{}] = (*NotifiedFuture)(nil)
var _ future.Canceler = (*NotifiedFuture)(nil)

// Poll completes when notified. Completing consumes a unit of the task's
// budget; with none left, Poll yields instead (see the future package, "The
// cooperative budget"). The owner calls it.
func (f *NotifiedFuture) Poll(cx *future.Context) (struct{}, bool) {
	if f.st != notifiedDone && f.st != notifiedCancelled && !cx.Proceed() {
		return struct{}{}, false
	}
	_, ok := f.poll(cx)
	if ok {
		cx.Spend()
	} else {
		cx.Waiting(waitNotified, waitNumber(&f.n.num)) // for a task dump: which Notify
	}
	return struct{}{}, ok
}

// waitNotified is what a task waiting in Notify.Notified waits on, for a task
// dump (future.Context.Waiting).
var waitNotified = future.NewWaitKind("Notify.Notified", future.WaitNumber)

// poll is Poll past the budget check.
func (f *NotifiedFuture) poll(cx *future.Context) (struct{}, bool) {
	switch f.st {
	case notifiedDone:
		panic(future.ErrPolledAfterCompletion)
	case notifiedCancelled:
		panic(future.ErrPolledAfterCancel)
	case notifiedStart:
		return f.first(cx)
	}
	n := f.n
	n.mu.Lock()
	if f.w.Linked() {
		if !f.w.Waker().WillWake(cx.Waker()) {
			f.w.SetWaker(cx.Waker())
		}
		n.mu.Unlock()
		return struct{}{}, false
	}
	f.w.Value = notifyByNone // delivered: nothing to pass on any more
	n.mu.Unlock()
	f.st = notifiedDone
	return struct{}{}, true
}

// first is the first poll: a permit or a moved generation completes it,
// otherwise it queues.
func (f *NotifiedFuture) first(cx *future.Context) (struct{}, bool) {
	n := f.n
	if n.state.Load()/notifyGenStep == f.gen && n.TryNotified() {
		f.st = notifiedDone
		return struct{}{}, true
	}
	n.mu.Lock()
	if n.checkLocked(f.gen) {
		n.mu.Unlock()
		f.st = notifiedDone
		return struct{}{}, true
	}
	n.waiters.PushBack(&f.w, cx.Waker())
	n.mu.Unlock()
	f.st = notifiedWaiting
	return struct{}{}, false
}

// Cancel leaves the waiter list; if the future had been handed NotifyOne's
// notification and not returned it, the notification passes on to the next
// waiter or becomes the stored permit. It is idempotent. The owner calls it.
func (f *NotifiedFuture) Cancel() {
	switch f.st {
	case notifiedStart:
		f.st = notifiedCancelled
	case notifiedWaiting:
		f.n.mu.Lock()
		_, wk := f.n.leaveLocked(&f.w)
		f.n.mu.Unlock()
		wk.Wake()
		f.st = notifiedCancelled
	}
}
