//go:build !race

package blitz_test

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// readyNow is a future that completes at every poll.
type readyNow int

func (r readyNow) Poll(*future.Context) (int, bool) { return int(r), true }

// BlockOn of a future ready at once, and JoinHandle.Wait of a task that
// has finished, allocate nothing of their own once warm: their Signal and
// Context are reused. Not under the race detector, whose sync.Pool drops
// a share of what it is given.
func TestBlockOnAndWaitAllocateNothingOfTheirOwn(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	ctx := context.Background()
	f := future.Future[int](readyNow(7))
	block := func() {
		if v, err := blitz.BlockOn(ctx, rt.Handle(), f); err != nil || v != 7 {
			t.Fatal(v, err)
		}
	}
	block()
	if n := testing.AllocsPerRun(200, block); n != 0 {
		t.Errorf("BlockOn: %v allocations, want 0", n)
	}
	h := blitz.SpawnOn(rt.Handle(), f)
	if v, err := h.Wait(ctx); err != nil || v != 7 {
		t.Fatal(v, err)
	}
	wait := func() {
		if v, err := h.Wait(ctx); err != nil || v != 7 {
			t.Fatal(v, err)
		}
	}
	if n := testing.AllocsPerRun(200, wait); n != 0 {
		t.Errorf("JoinHandle.Wait of a finished task: %v allocations, want 0", n)
	}
}
