package future

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/waker"
)

// Block polls f on the calling goroutine until it completes, and returns its
// value: the runtime-free bridge from goroutines to futures. It polls with a
// Context like NewContext's, whose Waker is a *waker.Signal of the call's
// own, and between polls it waits on that Signal, so it polls again only
// after a wake and never spins. The Signal and the Context are reused by
// later calls (Block allocates nothing of its own once warm): a Waker taken
// from the Context may be woken after Block returned, which costs a later
// call one spurious poll. A wake that arrives during a poll stays pending in the
// Signal, so none is lost.
//
// If ctx is done before f completes, Block cancels f (Cancel) and returns the
// zero T and an error that wraps both context.Cause(ctx) and ctx.Err(), so
// errors.Is matches either. A future that completes on the poll Block makes
// first wins over a ctx that is already done, as a pending wakeup wins in
// waker.Signal.Wait.
//
// Block takes ownership of f; f must not need a runtime's Services (it sees a
// nil Executor). A nil f is a misuse answered with ErrNilFuture as the
// error, since Block has one to return. Any goroutine may call Block, but
// not a task's Poll: blocking a worker stalls its runtime.
func Block[T any](ctx context.Context, f Future[T]) (T, error) {
	if f == nil {
		var zero T
		return zero, fmt.Errorf("future: block: %w", ErrNilFuture)
	}
	b := getBlocker()
	for {
		if v, ok := f.Poll(&b.cx); ok {
			putBlocker(b)
			return v, nil
		}
		if err := b.sig.Wait(ctx); err != nil {
			Cancel(f)
			putBlocker(b)
			var zero T
			return zero, blockError(ctx, err)
		}
	}
}

// blocker is what one Block call polls and waits with: a Signal, and a
// Context whose Waker wakes it. Block takes one from blockers and puts it
// back when it returns, so that the blocking calls of goroutine code
// allocate nothing of their own in steady state.
//
// A Waker handed out during one call may fire after that call returned (a
// future kept it, and completes or is woken later, as a cancelled one may).
// The wake then lands on a later call that took the same blocker, as a
// spurious wakeup: Block absorbs it, since it polls again after every wake
// and returns only on a completed poll.
type blocker struct {
	sig waker.Signal
	cx  Context
	// wk is the Waker of sig, made once: the Context is reset to it at
	// each call.
	wk waker.Waker
}

// blockers holds the blockers not in use.
var blockers = sync.Pool{New: func() any {
	b := new(blocker)
	b.wk = waker.New(&b.sig)
	return b
}}

// getBlocker takes a blocker, its Context set as NewContext sets one.
func getBlocker() *blocker {
	b := blockers.Get().(*blocker)
	b.cx = Context{waker: b.wk, worker: NoWorker}
	return b
}

// putBlocker gives b back. A wakeup left pending (a wake that came during
// the last poll) is dropped, so that the next call does not begin with a
// spurious one; a stale Waker may still leave another later.
func putBlocker(b *blocker) {
	b.sig.TryWait()
	b.cx = Context{}
	blockers.Put(b)
}

// blockError is Block's error for a done ctx whose Err is err.
func blockError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("future: block: %w (%w)", cause, err)
	}
	return fmt.Errorf("future: block: %w", err)
}
