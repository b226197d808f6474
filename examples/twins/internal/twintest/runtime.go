package twintest

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz"
)

// Runtime returns a new blitz runtime, shut down when the test ends.
func Runtime(t testing.TB) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return rt
}
