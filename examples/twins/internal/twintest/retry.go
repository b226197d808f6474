package twintest

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Outcome is what attempt n of the retry test does: return Value, or fail
// with Err, or panic with Panic, or Hang until it is cancelled (at most a
// minute).
type Outcome struct {
	Value string
	Err   error
	Panic any
	Hang  bool
}

// Attempts counts the attempts of the retry test and those cancelled.
type Attempts struct{ Made, Cancelled atomic.Int32 }

// Policy is the retry policy under test, in the versions' terms.
type Policy struct {
	Attempts      int
	Base, Max     time.Duration
	AttemptBounds time.Duration
}

// Retry is a version of examples/twins/retry under test.
type Retry struct {
	// Run retries an attempt that does what script(n) says at attempt n,
	// counting in a.
	Run func(t *testing.T, p Policy, script func(n int) Outcome, a *Attempts) (string, error)
	// Abandon runs the same, cancelling the whole retry after d; it returns
	// once the retry is over.
	Abandon func(t *testing.T, p Policy, script func(n int) Outcome, a *Attempts, d time.Duration)
	// Backoff is the policy's wait after failed attempt n.
	Backoff func(p Policy, n int) time.Duration
}

var errFlaky = errors.New("flaky")

// RunRetry drives a version of examples/twins/retry.
func RunRetry(t *testing.T, v Retry) {
	p := Policy{Attempts: 4, Base: 2 * time.Millisecond, Max: 6 * time.Millisecond, AttemptBounds: time.Second}
	t.Run("SucceedsOnThird", func(t *testing.T) {
		var a Attempts
		start := time.Now()
		got, err := v.Run(t, p, func(n int) Outcome {
			if n < 2 {
				return Outcome{Err: errFlaky}
			}
			return Outcome{Value: "done"}
		}, &a)
		if got != "done" || err != nil || a.Made.Load() != 3 {
			t.Errorf("got %q, %v after %d attempts, want done after 3", got, err, a.Made.Load())
		}
		if d := time.Since(start); d < 3*time.Millisecond { // at least 2/2 + 4/2 ms of backoff
			t.Errorf("3 attempts took %v: no backoff", d)
		}
	})
	t.Run("PanicIsAFailure", func(t *testing.T) {
		var a Attempts
		got, err := v.Run(t, p, func(n int) Outcome {
			if n == 0 {
				return Outcome{Panic: "boom"}
			}
			return Outcome{Value: "recovered"}
		}, &a)
		if got != "recovered" || err != nil || a.Made.Load() != 2 {
			t.Errorf("got %q, %v after %d attempts, want recovered after 2", got, err, a.Made.Load())
		}
	})
	t.Run("GivesUp", func(t *testing.T) {
		var a Attempts
		_, err := v.Run(t, p, func(n int) Outcome {
			if n%2 == 0 {
				return Outcome{Err: errFlaky}
			}
			return Outcome{Panic: "boom"}
		}, &a)
		if a.Made.Load() != 4 || err == nil || !strings.Contains(err.Error(), "after 4 attempts") ||
			!strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "boom") {
			t.Errorf("%d attempts, err %v; want 4, and the last attempt's panic", a.Made.Load(), err)
		}
		_, err = v.Run(t, p, func(int) Outcome { return Outcome{Err: errFlaky} }, &a)
		if !errors.Is(err, errFlaky) {
			t.Errorf("err = %v, want flaky", err)
		}
	})
	t.Run("AttemptTimesOut", func(t *testing.T) {
		var a Attempts
		q := p
		q.AttemptBounds = 30 * time.Millisecond
		got, err := v.Run(t, q, func(n int) Outcome {
			if n == 0 {
				return Outcome{Hang: true}
			}
			return Outcome{Value: "second"}
		}, &a)
		if got != "second" || err != nil || a.Made.Load() != 2 || a.Cancelled.Load() != 1 {
			t.Errorf("got %q, %v after %d attempts, %d cancelled; want second after 2, 1 cancelled", got, err, a.Made.Load(), a.Cancelled.Load())
		}
	})
	t.Run("Abandon", func(t *testing.T) {
		var a Attempts
		v.Abandon(t, p, func(int) Outcome { return Outcome{Hang: true} }, &a, 20*time.Millisecond)
		made := a.Made.Load()
		time.Sleep(30 * time.Millisecond)
		if made != 1 || a.Made.Load() != 1 || a.Cancelled.Load() != 1 {
			t.Errorf("%d attempts (%d later), %d cancelled; want the one in flight cancelled, no more", made, a.Made.Load(), a.Cancelled.Load())
		}
	})
	t.Run("Backoff", func(t *testing.T) {
		q := Policy{Attempts: 10, Base: 100 * time.Millisecond, Max: time.Second}
		for n, full := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
			full *= time.Millisecond
			for range 100 {
				if d := v.Backoff(q, n); d < full/2 || d > full {
					t.Fatalf("backoff(%d) = %v, want in [%v, %v]", n, d, full/2, full)
				}
			}
		}
		if d := v.Backoff(q, 200); d < q.Max/2 || d > q.Max {
			t.Errorf("backoff(200) = %v", d)
		}
	})
}
