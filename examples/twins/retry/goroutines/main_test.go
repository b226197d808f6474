package main

import (
	"context"
	"testing"
	"time"

	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func policyOf(p twintest.Policy) policy {
	return policy{attempts: p.Attempts, base: p.Base, max: p.Max, timeout: p.AttemptBounds}
}

// scripted is an attempt that does what script says.
func scripted(script func(int) twintest.Outcome, a *twintest.Attempts) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		o := script(int(a.Made.Add(1) - 1))
		switch {
		case o.Panic != nil:
			panic(o.Panic)
		case o.Hang:
			select {
			case <-ctx.Done():
				a.Cancelled.Add(1)
				return "", ctx.Err()
			case <-time.After(time.Minute):
			}
		}
		return o.Value, o.Err
	}
}

func TestRetry(t *testing.T) {
	twintest.RunRetry(t, twintest.Retry{
		Run: func(t *testing.T, p twintest.Policy, script func(int) twintest.Outcome, a *twintest.Attempts) (string, error) {
			return retry(context.Background(), policyOf(p), scripted(script, a))
		},
		Abandon: func(t *testing.T, p twintest.Policy, script func(int) twintest.Outcome, a *twintest.Attempts, d time.Duration) {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			if _, err := retry(ctx, policyOf(p), scripted(script, a)); err == nil {
				t.Error("an abandoned retry succeeded")
			}
		},
		Backoff: func(p twintest.Policy, n int) time.Duration { return policyOf(p).backoff(n) },
	})
}
