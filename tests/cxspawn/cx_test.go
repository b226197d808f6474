package cxspawn

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSpawnFromAsyncFunction: the async function spawns its children on
// the runtime that polls it, found through future.Cx(), and awaits each.
func TestSpawnFromAsyncFunction(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	before := rt.Stats().Spawned
	got, err := blitz.BlockOn(context.Background(), rt.Handle(), sumOfSquaresAsync(10))
	if err != nil || got.Err != nil || got.Value != 285 {
		t.Fatalf("sum of squares: %+v, %v; want 285", got, err)
	}
	if spawned := rt.Stats().Spawned - before; spawned < 10 {
		t.Errorf("%d tasks spawned, want the 10 children", spawned)
	}
}
