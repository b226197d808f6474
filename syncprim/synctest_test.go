package syncprim_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blitz-go/blitz/syncprim"
)

// TestBlockingTierInsideAndOutsideSynctestBubbles: goroutines that block
// on a Mutex and a Barrier inside several testing/synctest bubbles and
// outside any, at once, never get a pooled Signal whose channel belongs to
// another bubble (the Go runtime ends the process when a goroutine uses a
// channel of a bubble it is not in), and a bubble's goroutines block
// durably, so its clock moves.
func TestBlockingTierInsideAndOutsideSynctestBubbles(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 30
	}
	contend := func(t *testing.T, m *syncprim.Mutex, n int) {
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for range n {
					g, err := m.LockBlocking(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					time.Sleep(10 * time.Microsecond)
					g.Unlock()
				}
			})
		}
		b := syncprim.NewBarrier(3)
		for range 2 {
			wg.Go(func() {
				if _, err := b.WaitBlocking(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		time.Sleep(time.Millisecond)
		if _, err := b.WaitBlocking(context.Background()); err != nil {
			t.Error(err)
		}
		wg.Wait()
	}
	var wg sync.WaitGroup
	wg.Go(func() { contend(t, new(syncprim.Mutex), rounds) })
	for range 3 {
		wg.Go(func() {
			for range rounds / 10 {
				synctest.Test(t, func(t *testing.T) { contend(t, new(syncprim.Mutex), 10) })
			}
		})
	}
	wg.Wait()
}
