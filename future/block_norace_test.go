//go:build !race

package future_test

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
)

// TestBlockAllocatesNothingOfItsOwn: once warm, Block takes its Signal and
// Context from its pool, for a future ready at once and for one that waits
// for a wake. Not under the race detector, whose sync.Pool drops items at
// random.
func TestBlockAllocatesNothingOfItsOwn(t *testing.T) {
	ready := future.Future[int](alwaysReady(1))
	if n := testing.AllocsPerRun(200, func() {
		if _, err := future.Block(context.Background(), ready); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Block of a ready future: %v allocations, want 0", n)
	}
	f := &flagFuture{}
	woken := make(chan struct{})
	go func() {
		for range woken {
			f.wake(true) // before Block's poll, or after it took the Waker
		}
	}()
	defer close(woken)
	if n := testing.AllocsPerRun(200, func() {
		f.mu.Lock()
		f.set = false
		f.mu.Unlock()
		woken <- struct{}{}
		if _, err := future.Block(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Block of a future completed by a wake: %v allocations, want 0", n)
	}
}

// alwaysReady is a future that completes at every poll.
type alwaysReady int

func (r alwaysReady) Poll(*future.Context) (int, bool) { return int(r), true }
