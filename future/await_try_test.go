package future_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/blitz-go/blitz/future"
)

// TestTryOutsideGeneratedPanics: Try, like Await, is a marker that panics
// when it is really called.
func TestTryOutsideGeneratedPanics(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, future.ErrAwaitOutsideGenerated) || !strings.Contains(err.Error(), "future_test.TestTryOutsideGeneratedPanics ran as written; call its constructor TestTryOutsideGeneratedPanicsAsync") {
			t.Fatalf("recovered %v, want ErrAwaitOutsideGenerated naming the caller", err)
		}
	}()
	_, _ = future.Try(future.Ready(future.Ok(1)))
	t.Fatal("Try returned")
}

// TestCxOutsideGeneratedPanics: Cx, like Await, is a marker that panics
// when it is really called.
func TestCxOutsideGeneratedPanics(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, future.ErrAwaitOutsideGenerated) {
			t.Fatalf("recovered %v, want ErrAwaitOutsideGenerated", err)
		}
	}()
	_ = future.Cx()
	t.Fatal("Cx returned")
}
