package future_test

import (
	"testing"

	"github.com/blitz-go/blitz/future"
)

// TestTryOutsideGeneratedPanics: Try, like Await, is a marker that panics
// when it is really called.
func TestTryOutsideGeneratedPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != future.ErrAwaitOutsideGenerated {
			t.Fatalf("recovered %v, want ErrAwaitOutsideGenerated", r)
		}
	}()
	_, _ = future.Try(future.Ready(future.Ok(1)))
	t.Fatal("Try returned")
}
