package syncprim

import (
	"context"
	"errors"

	"github.com/blitz-go/blitz/future"
)

// ErrNotLocked is the panic value of unlocking a Mutex or RwLock guard whose
// lock is not held that way: a double unlock, or the zero guard.
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
}

// MutexGuard is proof of holding a Mutex; Unlock releases it. The zero
// MutexGuard holds nothing.
type MutexGuard struct {
	// m is the locked mutex, nil for the zero guard. Read-only.
	m *Mutex
}

// TryLock locks m if it is unlocked and nobody is queued, without waiting:
// one CAS, no allocation.
func (m *Mutex) TryLock() (MutexGuard, bool) {
	if m.c.state.CompareAndSwap(0, mutexLocked) {
		return MutexGuard{m}, true
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
		return MutexGuard{m}, nil
	}
	if err := m.c.acquireBlocking(ctx, 1, mutexBias, 0); err != nil {
		return MutexGuard{}, err
	}
	return MutexGuard{m}, nil
}

// Unlock unlocks the mutex, handing it to the first queued waiter if any. It
// panics with ErrNotLocked for the zero guard or a mutex that is not locked.
// Unlocking through a copy of a guard already unlocked is not always caught
// (the mutex may be locked again by then), as with sync.Mutex.
func (g MutexGuard) Unlock() {
	if m := g.m; m == nil || !m.c.state.CompareAndSwap(mutexLocked, 0) {
		unlockSlow(m)
	}
}

// unlockSlow is Unlock with waiters queued, or misuse.
func unlockSlow(m *Mutex) {
	if m == nil {
		panic(ErrNotLocked)
	}
	m.c.release(1, 0)
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

// Poll returns the guard and true once the mutex is locked.
func (f *LockFuture) Poll(cx *future.Context) (MutexGuard, bool) {
	if m := f.m; f.op.phase == opNew && m.c.state.CompareAndSwap(0, mutexLocked) {
		f.op.phase = opDone
		return MutexGuard{m}, true
	}
	return f.pollSlow(cx)
}

// pollSlow is Poll past the uncontended first poll.
func (f *LockFuture) pollSlow(cx *future.Context) (MutexGuard, bool) {
	if _, ok := f.op.poll(cx); !ok {
		return MutexGuard{}, false
	}
	return MutexGuard{f.m}, true
}

// Cancel leaves the queue; a lock handed to the future passes on.
// Idempotent, allowed before the first poll and after completion.
func (f *LockFuture) Cancel() { f.op.cancel() }

var (
	_ future.Future[MutexGuard] = (*LockFuture)(nil)
	_ future.Canceler           = (*LockFuture)(nil)
)
