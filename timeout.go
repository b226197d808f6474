package blitz

import (
	"fmt"
	"time"

	"github.com/blitz-go/blitz/future"
)

// timeoutFuture is the future of Timeout and Deadline: the inner future's
// value, or ErrTimeout if the time runs out first. When the time runs out
// the inner future is cancelled (future.Cancel), not just forgotten; when the
// inner future completes first, the timer leaves the wheel at once.
type timeoutFuture[T any] struct {
	// f is the inner future, nil once finished with.
	f future.Future[T]
	// sleep is the timer, embedded so a timeout allocates once.
	sleep SleepFuture
	// done is set when the future returned its result.
	done bool
}

// Timeout bounds f by d: its result is f's value, or ErrTimeout (which
// errors.Is also matches with context.DeadlineExceeded) once d has passed
// (from the call) without f completing. f is always polled first, so
// a timeout of zero or less still gives the value of an f that is ready at
// its first poll (as Tokio's timeout does), and fails with ErrTimeout at that
// same poll otherwise. A d too long for the clock to count (math.MaxInt64)
// never runs out. When the time runs out, f is cancelled; when f completes
// first, the timer leaves the wheel at once. future.Cancel of the returned
// future cancels f and removes the timer.
//
// A nil f is misuse: the returned future completes at its first poll with an
// error matching ErrNilFuture.
func Timeout[T any](d time.Duration, f future.Future[T]) future.Future[future.Result[T]] {
	if f == nil {
		return future.Ready(future.Fail[T](errNilTimeout))
	}
	return &timeoutFuture[T]{f: f, sleep: SleepFuture{deadline: after(d)}}
}

// Deadline bounds f by t: its result is f's value, or ErrTimeout once t has
// passed without f completing. As with Timeout, f is polled first (a t
// already passed still gives the value of an f ready at its first poll), a
// t math.MaxInt64 nanoseconds (about 292 years) or more after the runtime
// started never comes, and a nil f completes with an error matching
// ErrNilFuture.
func Deadline[T any](t time.Time, f future.Future[T]) future.Future[future.Result[T]] {
	if f == nil {
		return future.Ready(future.Fail[T](errNilTimeout))
	}
	return &timeoutFuture[T]{f: f, sleep: SleepFuture{deadline: t}}
}

// errNilTimeout is the error of Timeout and Deadline given a nil future.
var errNilTimeout = fmt.Errorf("blitz: Timeout or Deadline: %w", ErrNilFuture)

// Poll polls the inner future first (a future ready at the deadline wins),
// then the timer. The timer is looked at outside the task's budget, so a
// deadline passes even for an inner future that spends the whole budget in
// every poll. Polling after completion panics with
// future.ErrPolledAfterCompletion, after Cancel with
// future.ErrPolledAfterCancel.
func (t *timeoutFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	if t.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if t.f == nil {
		panic(future.ErrPolledAfterCancel)
	}
	if v, ok := t.f.Poll(cx); ok {
		t.finish()
		return future.Ok(v), true
	}
	if _, ok := t.sleepPoll(cx); ok {
		future.Cancel(t.f)
		t.finish()
		return future.Fail[T](ErrTimeout), true
	}
	return future.Result[T]{}, false
}

// sleepPoll polls the timer without the budget.
func (t *timeoutFuture[T]) sleepPoll(cx *future.Context) (struct{}, bool) {
	if t.sleep.done {
		return struct{}{}, true
	}
	return t.sleep.poll(cx)
}

// finish releases the inner future and the timer.
func (t *timeoutFuture[T]) finish() {
	t.done = true
	t.f = nil
	t.sleep.Cancel()
}

// Cancel cancels the inner future and removes the timer; it makes
// timeoutFuture a future.Canceler. Idempotent.
func (t *timeoutFuture[T]) Cancel() {
	if t.f != nil {
		future.Cancel(t.f)
		t.f = nil
	}
	t.sleep.Cancel()
}

// TryTimeout is Timeout for a fallible future: its result is f's own
// Result, or one whose error is ErrTimeout once d has passed, not a Result
// nested in another. It is the shape an async function awaits with
// future.Try:
//
//	line, err := future.Try(blitz.TryTimeout(time.Second, r.ReadLine()))
//
// Everything else is as Timeout: f is polled first, a d too long for the
// clock never runs out, f is cancelled when the time runs out, and a nil f
// fails with an error matching ErrNilFuture.
func TryTimeout[T any](d time.Duration, f future.Future[future.Result[T]]) future.Future[future.Result[T]] {
	if f == nil {
		return future.Ready(future.Fail[T](errNilTimeout))
	}
	return &tryTimeoutFuture[T]{t: timeoutFuture[future.Result[T]]{f: f, sleep: SleepFuture{deadline: after(d)}}}
}

// TryDeadline is Deadline for a fallible future, as TryTimeout is Timeout.
func TryDeadline[T any](t time.Time, f future.Future[future.Result[T]]) future.Future[future.Result[T]] {
	if f == nil {
		return future.Ready(future.Fail[T](errNilTimeout))
	}
	return &tryTimeoutFuture[T]{t: timeoutFuture[future.Result[T]]{f: f, sleep: SleepFuture{deadline: t}}}
}

// tryTimeoutFuture is the future of TryTimeout and TryDeadline: a
// timeoutFuture (embedded by value: one allocation) whose two levels of
// Result are flattened into one.
type tryTimeoutFuture[T any] struct {
	t timeoutFuture[future.Result[T]]
}

// Poll is timeoutFuture's, with f's Result returned as it is.
func (t *tryTimeoutFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	r, ok := t.t.Poll(cx)
	if !ok {
		return future.Result[T]{}, false
	}
	if r.Err != nil {
		return future.Result[T]{Err: r.Err}, true // ErrTimeout
	}
	return r.Value, true
}

// Cancel cancels f and removes the timer. Idempotent.
func (t *tryTimeoutFuture[T]) Cancel() { t.t.Cancel() }
