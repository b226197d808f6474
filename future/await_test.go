package future_test

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/future"
)

func TestAwaitCalledForRealPanicsWithItsSentinel(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, future.ErrAwaitOutsideGenerated) {
			t.Fatalf("recovered %v, want future.ErrAwaitOutsideGenerated", r)
		}
	}()
	future.Await(future.Ready(1))
	t.Fatal("Await returned")
}
