package future

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/waker"
)

// Block polls f on the calling goroutine until it completes, and returns its
// value: the runtime-free bridge from goroutines to futures. It polls with a
// Context from NewContext whose Waker is a *waker.Signal of its own, and
// between polls it waits on that Signal, so it polls again only after a wake
// and never spins. A wake that arrives during a poll stays pending in the
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
	var sig waker.Signal
	cx := NewContext(waker.New(&sig))
	for {
		if v, ok := f.Poll(cx); ok {
			return v, nil
		}
		if err := sig.Wait(ctx); err != nil {
			Cancel(f)
			var zero T
			return zero, blockError(ctx, err)
		}
	}
}

// blockError is Block's error for a done ctx whose Err is err.
func blockError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("future: block: %w (%w)", cause, err)
	}
	return fmt.Errorf("future: block: %w", err)
}
