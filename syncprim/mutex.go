package syncprim

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
)

// ErrNotLocked is the panic value of unlocking the zero MutexGuard,
// ReadGuard or WriteGuard, which holds nothing. A guard unlocked twice
// panics with ErrGuardReleased instead.
var ErrNotLocked = errors.New("syncprim: unlock of unlocked lock")

// mutexBias is the Mutex's bias: the zero state word means 1 free permit.
const mutexBias = 1

// mutexLocked is the state word of a locked Mutex with nobody queued.
const mutexLocked = -1 << flagBits

// Mutex is an async mutual-exclusion lock: a semaphore of one permit, FIFO
// fair with direct hand-off (see "Mutex" in the package doc). Tasks lock
// it through Lock's future, goroutines through LockBlocking, and both queue
// in one FIFO. The zero Mutex is unlocked and ready to use. A Mutex must not
// be copied after first use.
type Mutex struct {
	_ noCopy
	// c is the semaphore with bias 1: state 0 is unlocked, mutexLocked is
	// locked with nobody queued.
	c semCore
	// seq counts the unlocks, and so tells the acquisitions apart: the
	// guard of an acquisition carries the value seq had when it was made,
	// and its Unlock moves seq on by one with a CAS from that value, before
	// it releases the permit. A guard already unlocked (or a copy of it)
	// finds seq moved and fails its CAS, so it can never release a later
	// holder's lock. Loaded by the acquirer once it holds the lock (after
	// the previous holder's CAS, which came before the release that let it
	// in); CAS by Unlock.
	seq atomic.Uint64
}

// MutexGuard is proof of holding a Mutex; Unlock releases it. A guard is
// a small value that may be copied, but releases its lock once: a second
// Unlock, through the guard or any copy of it, panics with
// ErrGuardReleased and leaves the mutex alone. The zero MutexGuard holds
// nothing.
type MutexGuard struct {
	// m is the locked mutex, nil for the zero guard. Read-only.
	m *Mutex
	// seq is m.seq at the acquisition (see Mutex.seq). Read-only.
	seq uint64
}

// guard returns the guard of the acquisition just made.
// The goroutine that just locked m calls it.
func (m *Mutex) guard() MutexGuard {
	return MutexGuard{m: m, seq: m.seq.Load()} // after the acquisition; pairs with Unlock's CAS
}

// TryLock locks m if it is unlocked and nobody is queued, without waiting:
// one CAS, no allocation.
func (m *Mutex) TryLock() (MutexGuard, bool) {
	if m.c.state.CompareAndSwap(0, mutexLocked) {
		return m.guard(), true
	}
	return MutexGuard{}, false
}

// Lock returns a future that completes with a guard once m is locked.
// Cancelling it leaves the queue at once, and if the lock had already been
// handed to it, passes the lock on.
func (m *Mutex) Lock() LockFuture {
	return LockFuture{m: m, op: acquireOp{core: &m.c, n: 1, kind: kindMutex}}
}

// LockBlocking locks m, blocking the calling goroutine until it holds the
// lock or ctx is done (an error wrapping ctx.Err(); the call leaves no trace).
// A free lock wins over a ctx that is already done.
func (m *Mutex) LockBlocking(ctx context.Context) (MutexGuard, error) {
	if m.c.state.CompareAndSwap(0, mutexLocked) {
		return m.guard(), nil
	}
	if err := m.c.acquireBlocking(ctx, 1, mutexBias, 0); err != nil {
		return MutexGuard{}, err
	}
	return m.guard(), nil
}

// Unlock unlocks the mutex, handing it to the first queued waiter if any. It
// panics with ErrNotLocked for the zero guard, and with ErrGuardReleased if
// this acquisition was already unlocked (through g or a copy of g): the
// mutex, perhaps locked again by somebody else since, is left alone.
func (g MutexGuard) Unlock() {
	m := g.m
	if m == nil || !m.seq.CompareAndSwap(g.seq, g.seq+1) { // pairs with the Load in guard
		unlockMisuse(m)
	}
	if !m.c.state.CompareAndSwap(mutexLocked, 0) {
		unlockSlow(m)
	}
}

// unlockSlow is Unlock with waiters queued: it hands the lock on.
func unlockSlow(m *Mutex) { m.c.release(1, 0) }

// unlockMisuse panics for the Unlock of a guard that holds nothing: the
// zero guard (m nil), or one already unlocked. Kept out of line: it is
// cold.
//
//go:noinline
func unlockMisuse(m *Mutex) {
	if m == nil {
		panic(ErrNotLocked)
	}
	panic(ErrGuardReleased)
}

// waiters returns the number of queued lockers, for tests.
func (m *Mutex) waiters() int { return m.c.waiterCount() }

// LockFuture is the future of Mutex.Lock. Its pointer implements
// future.Future[MutexGuard] and future.Canceler. Keep it in the task's
// state and do not copy it after the first poll.
type LockFuture struct {
	_ noCopy
	// m is the mutex, for the guard. Read-only.
	m  *Mutex
	op acquireOp
}

// Poll returns the guard and true once the mutex is locked. Taking the lock
// consumes a unit of the task's budget; with none left, Poll yields instead
// of locking, so that tasks contending the mutex on one worker take turns
// (see the future package, "The cooperative budget").
func (f *LockFuture) Poll(cx *future.Context) (MutexGuard, bool) {
	if f.op.phase == opNew {
		if !cx.Proceed() {
			return MutexGuard{}, false
		}
		if m := f.m; m.c.state.CompareAndSwap(0, mutexLocked) {
			f.op.phase = opDone
			cx.Spend()
			return m.guard(), true
		}
	}
	return f.pollSlow(cx)
}

// pollSlow is Poll past the uncontended first poll.
func (f *LockFuture) pollSlow(cx *future.Context) (MutexGuard, bool) {
	if _, ok := f.op.poll(cx); !ok {
		return MutexGuard{}, false
	}
	return f.m.guard(), true
}

// Cancel leaves the queue; a lock handed to the future passes on.
// Idempotent, allowed before the first poll and after completion.
func (f *LockFuture) Cancel() { f.op.cancel() }

var (
	_ future.Future[MutexGuard] = (*LockFuture)(nil)
	_ future.Canceler           = (*LockFuture)(nil)
)
