package channels_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/blitz-go/blitz/channels"
)

// TestBlockingInsideAndOutsideSynctestBubbles: goroutines that send and
// receive through small channels inside several testing/synctest bubbles
// and outside any, at once, never get a pooled Signal whose channel
// belongs to another bubble (the Go runtime ends the process when a
// goroutine uses a channel of a bubble it is not in).
func TestBlockingInsideAndOutsideSynctestBubbles(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	pingPong := func(t *testing.T, n int) {
		c := channels.NewBounded[int](1)
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range n {
				if err := c.SendBlocking(context.Background(), i); err != nil {
					t.Error(err)
					return
				}
			}
		})
		for i := range n {
			if v, err := c.RecvBlocking(context.Background()); err != nil || v != i {
				t.Errorf("received %d, %v; want %d", v, err, i)
				break
			}
		}
		wg.Wait()
	}
	var wg sync.WaitGroup
	wg.Go(func() { pingPong(t, n) })
	for range 3 {
		wg.Go(func() {
			for range 10 {
				synctest.Test(t, func(t *testing.T) { pingPong(t, n/10) })
			}
		})
	}
	wg.Wait()
}
