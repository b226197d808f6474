package blitz_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: every runtime a
// test starts is shut down, and Shutdown returns only once its workers have.
// Started with childFlag, the binary is the process tests' child program
// instead.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		os.Exit(runChild(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}

// newRuntime starts a runtime with workers workers, shut down when the test
// ends.
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

// testCtx is a context that ends a stuck test with a clear error instead of
// a hang.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
