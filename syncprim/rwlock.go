package syncprim

import (
	"context"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
)

// MaxReaders is the number of readers that may hold an RwLock at once: a
// reader takes 1 of MaxReaders permits, a writer all of them.
const MaxReaders = 1 << 30

// rwWriteLocked is the state word of a write-locked RwLock with nobody
// queued (all MaxReaders permits taken; bias MaxReaders).
const rwWriteLocked = -MaxReaders << flagBits

// RwLock is an async reader-writer lock with a FIFO-fair phase policy (see
// "RwLock" in the package doc): a waiting writer holds back readers that
// come after it, and readers queued before a writer get in before it, so
// neither side starves. The zero RwLock is unlocked and ready to use. An
// RwLock must not be copied after first use.
type RwLock struct {
	_ noCopy
	// c is the semaphore with bias MaxReaders: state 0 is unlocked.
	c semCore
	// ident is the lock's number and writer, for task dumps (lockid.go).
	ident lockIdentity
	// wseq counts the write unlocks and downgrades, to tell write
	// acquisitions apart as the Mutex's generation does: loaded by the
	// writer once it holds the lock, CAS (from its guard's value) by its
	// Unlock or Downgrade before it releases any permit.
	wseq atomic.Uint64
}

// ReadGuard is proof of holding an RwLock for reading; Unlock releases it.
// A guard may be copied, but releases its read lock once: a second Unlock,
// through the guard or any copy of it, panics with ErrGuardReleased and
// leaves the other readers' hold alone. The zero ReadGuard holds nothing.
type ReadGuard struct {
	// l is the locked RwLock, nil for the zero guard. Read-only.
	l *RwLock
	// tok and seq tell this read acquisition apart from the others (see
	// guardToken). Read-only.
	tok *guardToken
	seq uint64
}

// WriteGuard is proof of holding an RwLock for writing; Unlock or Downgrade
// releases it, once: a second release, through the guard or any copy of
// it, panics with ErrGuardReleased and leaves the lock alone. The zero
// WriteGuard holds nothing.
type WriteGuard struct {
	// l is the locked RwLock, nil for the zero guard. Read-only.
	l *RwLock
	// seq is l.wseq at the acquisition (see RwLock.wseq). Read-only.
	seq uint64
}

// readGuard returns the guard of the read acquisition just made.
// The goroutine that just read-locked l calls it.
func (l *RwLock) readGuard() ReadGuard {
	tok, seq := takeToken()
	return ReadGuard{l: l, tok: tok, seq: seq}
}

// writeGuard returns the guard of the write acquisition just made.
// The goroutine that just write-locked l calls it.
func (l *RwLock) writeGuard() WriteGuard {
	return WriteGuard{l: l, seq: l.wseq.Load()} // after the acquisition; pairs with release's CAS
}

// TryRLock read-locks l if no writer holds it and nobody is queued: one CAS.
func (l *RwLock) TryRLock() (ReadGuard, bool) {
	if l.c.tryAcquire(1, MaxReaders) {
		return l.readGuard(), true
	}
	return ReadGuard{}, false
}

// RLock returns a future that completes with a read guard. Cancelling it
// leaves the queue at once and passes on a read lock already handed to it.
func (l *RwLock) RLock() *RLockFuture {
	return &RLockFuture{l: l, op: acquireOp{core: &l.c, n: 1, kind: kindRwLock}}
}

// RLockBlocking read-locks l, blocking the calling goroutine until it holds
// the read lock or ctx is done (an error wrapping ctx.Err()).
func (l *RwLock) RLockBlocking(ctx context.Context) (ReadGuard, error) {
	if err := l.c.acquireBlocking(ctx, 1, MaxReaders, 0); err != nil {
		return ReadGuard{}, err
	}
	return l.readGuard(), nil
}

// TryLock write-locks l if it is not locked at all and nobody is queued.
func (l *RwLock) TryLock() (WriteGuard, bool) {
	if l.c.state.CompareAndSwap(0, rwWriteLocked) {
		return l.writeGuard(), true
	}
	return WriteGuard{}, false
}

// Lock returns a future that completes with a write guard. Cancelling it
// leaves the queue at once; the read permits it had gathered while at the
// head of the queue go to the waiters behind it.
func (l *RwLock) Lock() *WLockFuture {
	return &WLockFuture{l: l, op: acquireOp{core: &l.c, n: MaxReaders, kind: kindRwLock}}
}

// LockBlocking write-locks l, blocking the calling goroutine until it holds
// the lock or ctx is done (an error wrapping ctx.Err()).
func (l *RwLock) LockBlocking(ctx context.Context) (WriteGuard, error) {
	if l.c.state.CompareAndSwap(0, rwWriteLocked) {
		return l.writeGuard(), nil
	}
	if err := l.c.acquireBlocking(ctx, MaxReaders, MaxReaders, 0); err != nil {
		return WriteGuard{}, err
	}
	return l.writeGuard(), nil
}

// Unlock releases the read lock. It panics with ErrNotLocked for the zero
// guard, and with ErrGuardReleased if this read acquisition was already
// released (through g or a copy of g); the lock is then left alone.
func (g ReadGuard) Unlock() {
	if g.l == nil {
		panic(ErrNotLocked)
	}
	if !releaseToken(g.tok, g.seq) {
		panic(ErrGuardReleased)
	}
	g.l.c.release(1, 0)
}

// release ends the write acquisition of g, panicking if it holds nothing.
func (g WriteGuard) release() *RwLock {
	l := g.l
	if l == nil {
		panic(ErrNotLocked)
	}
	if !l.wseq.CompareAndSwap(g.seq, g.seq+1) { // pairs with the Load in writeGuard
		panic(ErrGuardReleased)
	}
	l.ident.note(0) // no writer from now on
	return l
}

// Unlock releases the write lock, admitting the queue in FIFO order. It
// panics with ErrNotLocked for the zero guard, and with ErrGuardReleased if
// this write acquisition was already released (by Unlock or Downgrade,
// through g or a copy of g); the lock is then left alone.
func (g WriteGuard) Unlock() {
	l := g.release()
	if l.c.state.CompareAndSwap(rwWriteLocked, 0) {
		return
	}
	l.c.release(MaxReaders, 0)
}

// Downgrade atomically turns the write lock into a read lock: it releases
// all permits but one, so the readers at the head of the queue get in and
// no writer can come between. It releases the write acquisition: a later
// Unlock or Downgrade of g panics with ErrGuardReleased, as does a
// Downgrade of a guard already released.
func (g WriteGuard) Downgrade() ReadGuard {
	l := g.release()
	r := l.readGuard() // before the release: the read hold is ours from now on
	l.c.release(MaxReaders-1, 0)
	return r
}

// waiters returns the number of queued lockers, for tests.
func (l *RwLock) waiters() int { return l.c.waiterCount() }

// RLockFuture is the future of RwLock.RLock. Its pointer implements
// future.Future[ReadGuard] and future.Canceler.
type RLockFuture struct {
	_ noCopy
	// l is the lock, for the guard. Read-only.
	l  *RwLock
	op acquireOp
}

// Poll returns the read guard and true once l is read-locked.
func (f *RLockFuture) Poll(cx *future.Context) (ReadGuard, bool) {
	if _, ok := f.op.poll(cx); !ok {
		cx.Waiting(waitRLock, f.l.waitNumber()) // for a task dump
		return ReadGuard{}, false
	}
	return f.l.readGuard(), true
}

// Cancel leaves the queue; a read lock handed to the future is released.
func (f *RLockFuture) Cancel() { f.op.cancel() }

// WLockFuture is the future of RwLock.Lock. Its pointer implements
// future.Future[WriteGuard] and future.Canceler.
type WLockFuture struct {
	_ noCopy
	// l is the lock, for the guard. Read-only.
	l  *RwLock
	op acquireOp
}

// Poll returns the write guard and true once l is write-locked.
func (f *WLockFuture) Poll(cx *future.Context) (WriteGuard, bool) {
	if _, ok := f.op.poll(cx); !ok {
		cx.Waiting(waitWLock, f.l.waitNumber()) // for a task dump
		return WriteGuard{}, false
	}
	f.l.ident.note(cx.TaskID())
	return f.l.writeGuard(), true
}

// Cancel leaves the queue; permits handed to the future are released.
func (f *WLockFuture) Cancel() { f.op.cancel() }

// What tasks waiting in RwLock.RLock and RwLock.Lock wait on, for a task
// dump (future.Context.Waiting).
var (
	waitRLock = future.NewWaitKind("RwLock.RLock", future.WaitLock)
	waitWLock = future.NewWaitKind("RwLock.Lock", future.WaitLock)
)

var (
	_ future.Future[ReadGuard]  = (*RLockFuture)(nil)
	_ future.Canceler           = (*RLockFuture)(nil)
	_ future.Future[WriteGuard] = (*WLockFuture)(nil)
	_ future.Canceler           = (*WLockFuture)(nil)
)
