package main

import (
	"context"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"github.com/blitz-go/blitz/future"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func policyOf(p twintest.Policy) policy {
	return policy{attempts: p.Attempts, base: p.Base, max: p.Max, timeout: p.AttemptBounds}
}

// scripted is an attempt that does what o says; its deferred call sees
// whether it returned or was cancelled.
//
//blitz:async
func scripted(o twintest.Outcome, a *twintest.Attempts) (string, error) {
	switch {
	case o.Panic != nil:
		panic(o.Panic)
	case o.Hang:
		returned := false
		defer func() {
			if !returned {
				a.Cancelled.Add(1)
			}
		}()
		future.Await(blitz.Sleep(time.Minute))
		returned = true
	}
	return o.Value, o.Err
}

func attempts(script func(int) twintest.Outcome, a *twintest.Attempts) func() future.Future[future.Result[string]] {
	return func() future.Future[future.Result[string]] {
		return scriptedAsync(script(int(a.Made.Add(1)-1)), a)
	}
}

func TestRetry(t *testing.T) {
	twintest.RunRetry(t, twintest.Retry{
		Run: func(t *testing.T, p twintest.Policy, script func(int) twintest.Outcome, a *twintest.Attempts) (string, error) {
			rt := twintest.Runtime(t)
			r, err := blitz.BlockOn(context.Background(), rt.Handle(), retryAsync(policyOf(p), attempts(script, a)))
			if err != nil {
				t.Fatal(err)
			}
			return r.Get()
		},
		Abandon: func(t *testing.T, p twintest.Policy, script func(int) twintest.Outcome, a *twintest.Attempts, d time.Duration) {
			rt := twintest.Runtime(t)
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			if _, err := blitz.BlockOn(ctx, rt.Handle(), retryAsync(policyOf(p), attempts(script, a))); err == nil {
				t.Error("an abandoned retry succeeded")
			}
		},
		Backoff: func(p twintest.Policy, n int) time.Duration { return policyOf(p).backoff(n) },
	})
}
