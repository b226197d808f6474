package syncprim

import (
	"context"

	"github.com/blitz-go/blitz/future"
)

// Permit is proof of holding permits of a Semaphore, taken by
// TryAcquirePermit, AcquirePermit or AcquirePermitBlocking; Release returns
// them. A Permit is a small value that may be copied, but returns its
// permits once: a second Release, through the Permit or any copy of it,
// panics with ErrGuardReleased and adds nothing to the semaphore. (A plain
// Release(n) cannot tell a double release from permits being added, which
// it also does; take Permits where that matters.) The zero Permit holds no
// permits, and its Release does nothing.
type Permit struct {
	// s is the semaphore, nil for the zero Permit and for a Permit of no
	// permits. Read-only.
	s *Semaphore
	// n is the number of permits held. Read-only.
	n int64
	// tok and seq tell this acquisition apart from the others (see
	// guardToken). Read-only.
	tok *guardToken
	seq uint64
}

// permit returns the Permit of the n permits just acquired.
// The goroutine that acquired them calls it.
func (s *Semaphore) permit(n int64) Permit {
	if n == 0 {
		return Permit{}
	}
	tok, seq := takeToken()
	return Permit{s: s, n: n, tok: tok, seq: seq}
}

// N returns the number of permits p holds (0 for the zero Permit).
func (p Permit) N() int { return int(p.n) }

// Release returns p's permits to the semaphore, handing them straight to
// queued waiters in FIFO order, as Semaphore.Release does. It panics with
// ErrGuardReleased if p's permits were already returned (through p or a
// copy of p), adding nothing. It works after Close.
func (p Permit) Release() {
	if p.s == nil {
		return
	}
	if !releaseToken(p.tok, p.seq) {
		panic(ErrGuardReleased)
	}
	p.s.c.release(p.n, MaxPermits)
}

// TryAcquirePermit is TryAcquire returning the permits as a Permit: it
// takes n permits without waiting, or reports false (see TryAcquire).
func (s *Semaphore) TryAcquirePermit(n int) (Permit, bool) {
	if !s.TryAcquire(n) {
		return Permit{}, false
	}
	return s.permit(int64(n)), true
}

// AcquirePermitBlocking is AcquireBlocking returning the permits as a
// Permit, with AcquireBlocking's errors.
func (s *Semaphore) AcquirePermitBlocking(ctx context.Context, n int) (Permit, error) {
	if err := s.AcquireBlocking(ctx, n); err != nil {
		return Permit{}, err
	}
	return s.permit(int64(n)), nil
}

// AcquirePermit is Acquire returning the permits as a Permit: its future
// completes with the Permit, or with Acquire's errors.
func (s *Semaphore) AcquirePermit(n int) *PermitFuture {
	return &PermitFuture{s: s, op: acquireOp{core: &s.c, n: int64(n), kind: kindSemaphore}}
}

// PermitFuture is the future of Semaphore.AcquirePermit. Its pointer
// implements future.Future[future.Result[Permit]] and future.Canceler. Keep
// it in the task's state and do not copy it after the first poll.
type PermitFuture struct {
	_ noCopy
	// s is the semaphore, for the Permit. Read-only.
	s  *Semaphore
	op acquireOp
}

// Poll returns the Permit (or ErrClosed, or ErrInvalidPermits) and true once
// the acquire is done, or false while queued.
func (f *PermitFuture) Poll(cx *future.Context) (future.Result[Permit], bool) {
	err, ok := f.op.poll(cx)
	switch {
	case !ok:
		cx.Waiting(waitAcquire, f.s.waitObject(f.op.n)) // for a task dump: which semaphore, how many permits
		return future.Result[Permit]{}, false
	case err != nil:
		return future.Fail[Permit](err), true
	}
	return future.Ok(f.s.permit(f.op.n)), true
}

// Cancel leaves the queue; permits handed to the future go to the next
// waiters. Idempotent, allowed before the first poll and after completion.
func (f *PermitFuture) Cancel() { f.op.cancel() }

var (
	_ future.Future[future.Result[Permit]] = (*PermitFuture)(nil)
	_ future.Canceler                      = (*PermitFuture)(nil)
)
