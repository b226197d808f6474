package simprims

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"errors"
	"fmt"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// ErrViolation is the error of a workload whose property failed: a
// violation of what the primitive's documentation promises.
var ErrViolation = errors.New("simprims: property violated")

// violation returns an error wrapping ErrViolation with the reason.
func violation(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrViolation, fmt.Sprintf(format, args...))
}

// pause lets the other tasks run at an interesting point of a workload, or
// not, as the run's seed decides: 3 times in 8 it runs on, 3 in 8 it
// yields (the task stays ready, and the strategy picks the next poll), 2 in
// 8 it sleeps 1 to 3 ms of virtual time (the task is not ready until its
// timer fires, which lets timeouts of other tasks run out).
//
//blitz:async
func pause() {
	r := blitz.Rand(future.Cx())
	n := r.IntN(8)
	if n < 3 {
		return
	}
	if n < 6 {
		future.Await(blitz.Yield())
		return
	}
	future.Await(blitz.Sleep(time.Duration(1+r.IntN(3)) * time.Millisecond))
}

// chance reports true with probability 1/n, from the run's seed.
func chance(cx *future.Context, n int) bool { return blitz.Rand(cx).IntN(n) == 0 }

// pick returns a random int in [0, n) from the run's seed.
func pick(cx *future.Context, n int) int { return blitz.Rand(cx).IntN(n) }

// between returns a random duration in [0, max] ms from the run's seed
// (a timeout of 0 fails at once unless its future is ready at the first
// poll).
func between(cx *future.Context, maxMillis int) time.Duration {
	return time.Duration(blitz.Rand(cx).IntN(maxMillis+1)) * time.Millisecond
}

// errGaveUp is the error of a wait that giveUp abandoned.
var errGaveUp = errors.New("simprims: gave up waiting")

// withTimeout bounds f by a random time of 0 to maxMillis ms, half the
// time with blitz.Timeout, half with giveUp, as the run's seed decides:
// the wait is then cancelled in every state, queued, woken or handed what
// it waited for. timedOut tells its error.
func withTimeout[T any](cx *future.Context, maxMillis int, f future.Future[T]) future.Future[future.Result[T]] {
	d := between(cx, maxMillis)
	if chance(cx, 2) {
		return blitz.Timeout(d, f)
	}
	return giveUp(d, f)
}

// giveUp bounds f by d as blitz.Timeout does, but looks at the timer
// first (a select whose first arm is the timer): once d has passed, f is
// cancelled even if it was woken and would complete at this poll. That
// cancel reaches a waiter between its wake and its next poll, the state
// in which a cancelled waiter must pass on what it was handed, and which
// blitz.Timeout, polling f first, never cancels.
func giveUp[T any](d time.Duration, f future.Future[T]) future.Future[future.Result[T]] {
	return future.Race(
		future.Map(blitz.Sleep(d), func(struct{}) future.Result[T] { return future.Fail[T](errGaveUp) }),
		future.Map(f, future.Ok[T]),
	)
}

// timedOut reports whether err is the end of a wait withTimeout bounded.
func timedOut(err error) bool {
	return errors.Is(err, blitz.ErrTimeout) || errors.Is(err, errGaveUp)
}

// all runs each of fs as a task of its own and waits for all of them,
// returning their errors joined (nil when all succeeded). A task that
// never finishes leaves all waiting: under simulation the run then ends
// with sim.ErrDeadlock, which is how a lost wakeup shows.
//
//blitz:async
func all(fs []future.Future[error]) error {
	hs := make([]blitz.JoinHandle[error], 0, len(fs))
	for _, f := range fs {
		hs = append(hs, blitz.Spawn(future.Cx(), f))
	}
	var errs []error
	for i, h := range hs {
		err, jerr := future.Try(h)
		if jerr == nil {
			jerr = err
		}
		if jerr != nil {
			errs = append(errs, fmt.Errorf("task %d: %w", i, jerr))
		}
	}
	return errors.Join(errs...)
}
