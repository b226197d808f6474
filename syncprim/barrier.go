package syncprim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// ErrBarrierSize is the panic value of NewBarrier given a party count below 1.
var ErrBarrierSize = errors.New("syncprim: barrier size must be at least 1")

// BarrierResult is what a wait at a Barrier returns once its round is
// complete.
type BarrierResult struct {
	// Leader is true for exactly one arrival per round: the n-th, the one
	// that completed the round and released the others.
	Leader bool
	// Generation numbers the round the arrival took part in: 0 for the
	// first round, 1 for the second, and so on.
	Generation uint64
}

// Barrier makes n parties wait for each other, round after round. Each
// party arrives with Wait (a future), WaitBlocking (a goroutine) or TryWait;
// the first n-1 arrivals of a round wait, and the n-th is the round's leader:
// it completes the round, releases the n-1 others and opens the next round.
//
// # Protocol
//
// One mutex guards the arrival count of the current round and the waiter
// list; the generation (the current round's number) is an atomic written
// only under the mutex. An arrival locks, and either increments the count
// and queues its Waiter (recording the current generation, its round), or,
// being the n-th, resets the count to 0, unlinks every queued waiter into a
// waker.WakeList, stores generation+1 and wakes the list after unlocking. A
// queued waiter that finds itself unlinked ("Unlinked means woken" in
// package waker) knows its round is complete; it was unlinked by that
// round's leader and only by it, so a waiter of round g is never confused
// with one of round g+1, whose waiters join the list only after the leader
// of g emptied it. Because the generation is stored after the unlinks, a
// woken waiter that loads a generation other than its own knows it was
// released without taking the lock. A load of its own generation proves
// nothing: the waiters past the first WakeList batch are woken under the
// lock, before the store, and a recycled Signal may carry a late wake. Such
// a waiter takes the lock and looks at its Waiter: unlinked, it was
// released; still linked, it keeps waiting (a future re-registers its
// Waker).
//
// Cancelling a wait (Cancel on the future, ctx done in WaitBlocking) before
// the round completes removes its Waiter and decrements the count: the
// arrival is withdrawn and the round needs another one. After the round
// completed cancel is a no-op: the round happened and the others were
// released; a blocking wait whose ctx ends in that race returns success.
//
// The zero Barrier is not usable; make one with NewBarrier. A Barrier must
// not be copied after first use.
type Barrier struct {
	_ noCopy

	n int // parties per round; set by NewBarrier, read-only

	// num is the barrier's number in task dumps, taken at its first wait
	// by a task (lockid.go's waitNumber).
	num atomic.Uint64

	mu      sync.Mutex
	count   int                  // arrivals queued in the current round, < n; guarded by mu
	waiters waker.List[struct{}] // the current round's queued arrivals; guarded by mu

	// gen is the current round's number. Stored only under mu, by a
	// round's leader after it unlinked the round's waiters, so a waiter of
	// round g (future or goroutine) that loads gen != g without the lock
	// knows it was released and its Waiter unlinked (the Store publishes
	// the unlink); one that loads g rechecks under mu.
	gen atomic.Uint64
}

// NewBarrier returns a barrier for n parties. It panics with ErrBarrierSize
// if n < 1. With n == 1 every arrival is its round's leader.
func NewBarrier(n int) *Barrier {
	if n < 1 {
		panic(ErrBarrierSize)
	}
	return &Barrier{n: n}
}

// arriveLocked records one arrival, with b.mu held. If the arrival does
// not complete the round it counts it and returns the round and false, with
// b.mu still held: the caller queues its Waiter and unlocks. If it completes
// the round it releases the round, unlocks b.mu, wakes the released
// waiters and returns the round and true: the caller is the leader.
func (b *Barrier) arriveLocked() (uint64, bool) {
	g := b.gen.Load()
	if b.count+1 < b.n {
		b.count++
		return g, false
	}
	b.releaseUnlock(g)
	return g, true
}

// releaseUnlock completes round g: it unlinks every waiter, opens round
// g+1, unlocks b.mu and wakes the released waiters outside the lock.
func (b *Barrier) releaseUnlock(g uint64) {
	var wl waker.WakeList
	b.count = 0
	wakeEveryWaiter(&b.waiters, struct{}{}, &wl)
	b.gen.Store(g + 1) // after the unlinks: see the field's comment
	b.mu.Unlock()
	wl.WakeAll()
}

// withdrawLocked removes w if it is still queued and withdraws its arrival.
// It reports whether it did; false means the round had completed. b.mu is
// held.
func (b *Barrier) withdrawLocked(w *waker.Waiter[struct{}]) bool {
	if !b.waiters.Remove(w) {
		return false
	}
	b.count--
	return true
}

// TryWait arrives only if this arrival completes the current round: then it
// is the round's leader, releases the others and returns true. Otherwise it
// does not arrive at all and returns false. It never waits and allocates
// nothing.
func (b *Barrier) TryWait() (BarrierResult, bool) {
	b.mu.Lock()
	if b.count+1 < b.n {
		b.mu.Unlock()
		return BarrierResult{}, false
	}
	g, _ := b.arriveLocked()
	return BarrierResult{Leader: true, Generation: g}, true
}

// Wait returns a future that arrives at the barrier on its first poll and
// completes when the arrival's round is complete. Embed it in a task's state
// and poll it through a pointer; cancel it (future.Cancel) if it is
// abandoned before completing, which withdraws its arrival if the round is
// not complete yet.
func (b *Barrier) Wait() *BarrierFuture {
	return &BarrierFuture{b: b}
}

// WaitBlocking arrives at the barrier and blocks the calling goroutine until
// the round is complete. If ctx is done first, the arrival is withdrawn and
// the error wraps ctx.Err(); if the round completed in that race, the wait
// succeeds. An arrival that completes the round succeeds even with a done
// ctx. In steady state it allocates nothing.
func (b *Barrier) WaitBlocking(ctx context.Context) (BarrierResult, error) {
	b.mu.Lock()
	g, leader := b.arriveLocked()
	if leader {
		return BarrierResult{Leader: true, Generation: g}, nil
	}
	bw := getBlockWaiter[struct{}](&barrierBlockWaiters)
	b.waiters.PushBack(&bw.w, waker.New(&bw.sig))
	b.mu.Unlock()
	defer putBlockWaiter(&barrierBlockWaiters, bw)
	for {
		err := bw.sig.Wait(ctx)
		if b.gen.Load() != g { // released: the leader stored gen after unlinking us
			return BarrierResult{Generation: g}, nil
		}
		// Still our generation: a wake from the overflow past the leader's
		// WakeList (delivered under mu, before the leader stores gen), a
		// late wake meant for the Signal's previous user, or ctx done. Only
		// the Waiter, under mu, tells them apart.
		b.mu.Lock()
		if !bw.w.Linked() { // unlinked means released
			b.mu.Unlock()
			return BarrierResult{Generation: g}, nil
		}
		if err == nil {
			b.mu.Unlock()
			continue // spurious: still queued, with our Waker
		}
		b.withdrawLocked(&bw.w)
		b.mu.Unlock()
		return BarrierResult{}, fmt.Errorf("syncprim: barrier wait: %w", err)
	}
}

// blockWaiter is what a goroutine of the blocking tier waits with: its
// Signal and its Waiter, recycled together through a sync.Pool, because a
// Waiter on a goroutine's stack escapes to the heap (the list keeps its
// address), which would cost an allocation per wait. A recycled Signal may
// receive one late Wake meant for its previous user; the waiting protocol
// treats it as spurious (the Waiter is rechecked under the lock).
type blockWaiter[V any] struct {
	sig waker.Signal
	w   waker.Waiter[V] // linked only while its goroutine waits; guarded by the primitive's lock
}

// The pools of blockWaiters, one per Waiter value type.
var (
	barrierBlockWaiters = sync.Pool{New: newBlockWaiter[struct{}]}
	notifyBlockWaiters  = sync.Pool{New: newBlockWaiter[notifyKind]}
	onceBlockWaiters    = sync.Pool{New: newBlockWaiter[onceGrant]}
)

// newBlockWaiter makes a pooled blockWaiter, its Signal's channel made
// now, outside any testing/synctest bubble (getBlockWaiter serves a
// goroutine that may be in one a blockWaiter of its own: see
// waker.SignalPool).
func newBlockWaiter[V any]() any {
	bw := new(blockWaiter[V])
	bw.sig.Chan()
	return bw
}

// getBlockWaiter takes an unlinked blockWaiter from p.
func getBlockWaiter[V any](p *sync.Pool) *blockWaiter[V] {
	if waker.MayBeInBubble() {
		return new(blockWaiter[V])
	}
	return p.Get().(*blockWaiter[V])
}

// putBlockWaiter returns bw to p once its Waiter is unlinked for good (one
// of a goroutine that may be in a bubble is dropped).
func putBlockWaiter[V any](p *sync.Pool, bw *blockWaiter[V]) {
	var zero V
	bw.w.Value = zero
	if !waker.MayBeInBubble() {
		p.Put(bw)
	}
}

// waiterCount reports the number of queued arrivals, for tests.
func (b *Barrier) waiterCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiters.Len()
}

// barrier future states; the owner's only.
const (
	barrierStart   uint8 = iota // not polled yet
	barrierWaiting              // arrived, Waiter queued (or unlinked by the leader)
	barrierDone                 // returned its result
	barrierCancelled
)

// BarrierFuture is Barrier.Wait's future. Its pointer implements
// future.Future[BarrierResult] and future.Canceler. It must not be copied
// after its first poll (go vet reports copies).
type BarrierFuture struct {
	_ noCopy

	b   *Barrier               // set at construction, read-only
	w   waker.Waiter[struct{}] // in b.waiters while waiting; guarded by b.mu
	gen uint64                 // the round it arrived in; owner only
	st  uint8                  // barrier future state; owner only
}

var _ future.Future[BarrierResult] = (*BarrierFuture)(nil)
var _ future.Canceler = (*BarrierFuture)(nil)

// Poll arrives on the first poll and completes once the round is complete.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the future package, "The cooperative budget"). The
// owner calls it.
func (f *BarrierFuture) Poll(cx *future.Context) (BarrierResult, bool) {
	if f.st != barrierDone && f.st != barrierCancelled && !cx.Proceed() {
		return BarrierResult{}, false
	}
	r, ok := f.poll(cx)
	if ok {
		cx.Spend()
	} else {
		cx.Waiting(waitBarrier, waitNumber(&f.b.num)) // for a task dump: which Barrier
	}
	return r, ok
}

// waitBarrier is what a task waiting in Barrier.Wait waits on, with the
// barrier's number, for a task dump (future.Context.Waiting):
// "Barrier.Wait 6".
var waitBarrier = future.NewWaitKind("Barrier.Wait", future.WaitNumber)

// poll is Poll past the budget check.
func (f *BarrierFuture) poll(cx *future.Context) (BarrierResult, bool) {
	switch f.st {
	case barrierDone:
		panic(future.ErrPolledAfterCompletion)
	case barrierCancelled:
		panic(future.ErrPolledAfterCancel)
	case barrierStart:
		return f.arrive(cx)
	}
	b := f.b
	if b.gen.Load() == f.gen { // not released yet (as far as a load can tell)
		b.mu.Lock()
		if f.w.Linked() {
			if !f.w.Waker().WillWake(cx.Waker()) {
				f.w.SetWaker(cx.Waker())
			}
			b.mu.Unlock()
			return BarrierResult{}, false
		}
		b.mu.Unlock()
	}
	f.st = barrierDone
	return BarrierResult{Generation: f.gen}, true
}

// arrive is the first poll: arrive, and either lead or queue.
func (f *BarrierFuture) arrive(cx *future.Context) (BarrierResult, bool) {
	b := f.b
	b.mu.Lock()
	g, leader := b.arriveLocked()
	if !leader {
		f.gen, f.st = g, barrierWaiting
		b.waiters.PushBack(&f.w, cx.Waker())
		b.mu.Unlock()
		return BarrierResult{}, false
	}
	f.st = barrierDone
	return BarrierResult{Leader: true, Generation: g}, true
}

// Cancel withdraws the arrival if its round is not complete yet; otherwise
// it only marks the future cancelled. It is idempotent. The owner calls it.
func (f *BarrierFuture) Cancel() {
	switch f.st {
	case barrierStart:
		f.st = barrierCancelled
	case barrierWaiting:
		if f.b.gen.Load() == f.gen { // maybe still queued
			f.b.mu.Lock()
			f.b.withdrawLocked(&f.w)
			f.b.mu.Unlock()
		}
		f.st = barrierCancelled
	}
}

// wakeEveryWaiter unlinks every waiter of l, setting its Value to v first,
// and keeps up to waker.WakeListCap of their Wakers in wl for the caller to
// wake after unlocking; the rare overflow beyond that is woken here, under
// the caller's lock, so that exactly the waiters present now are woken (see
// "Waking outside the lock" in package waker). The overflow is woken before
// the caller publishes whatever it changes after this call, so a woken
// waiter must not judge its wake by a lock-free look at that state: it takes
// the lock and checks that its Waiter is unlinked. The caller holds the lock
// that guards l.
func wakeEveryWaiter[T any](l *waker.List[T], v T, wl *waker.WakeList) {
	for w := l.Front(); w != nil; w = w.Next() {
		w.Value = v
	}
	l.PopInto(wl)
	l.WakeAll()
}
