package asyncbench

import (
	"context"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"go.uber.org/goleak"
)

// TestMain fails the run if a test or benchmark leaves a goroutine behind:
// every runtime is shut down and every goroutine started is joined.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newRuntime starts a runtime, shut down when the test or benchmark ends.
func newRuntime(t testing.TB, cfg blitz.Config) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return rt
}

// waitFor polls cond until it holds, and fails t (reporting what) if it
// does not within d: a watchdog, so that a lost wakeup fails the test
// instead of hanging it.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v still waiting for %s", d, what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
