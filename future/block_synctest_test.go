package future_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// wakeLater is a future that a goroutine of its own completes a moment
// after its first poll, waking the Waker of the latest poll: a Block of it
// waits on its Blocker's channel.
type wakeLater struct {
	mu      sync.Mutex
	started bool
	done    bool
	wk      waker.Waker
}

func (f *wakeLater) Poll(cx *future.Context) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return 1, true
	}
	f.wk = cx.Waker()
	if !f.started {
		f.started = true
		go func() {
			time.Sleep(time.Millisecond)
			f.mu.Lock()
			f.done = true
			wk := f.wk
			f.mu.Unlock()
			wk.Wake()
		}()
	}
	return 0, false
}

func (f *wakeLater) Cancel() {}

// TestBlockInsideAndOutsideSynctestBubbles: Block calls that wait, made
// at once inside several testing/synctest bubbles and outside any, never
// hand one another a Blocker whose channel belongs to another bubble (the
// Go runtime ends the process when a goroutine uses a channel of a bubble
// it is not in).
func TestBlockInsideAndOutsideSynctestBubbles(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range rounds {
				if v, err := future.Block(context.Background(), future.Future[int](&wakeLater{})); err != nil || v != 1 {
					t.Errorf("outside: Block = %d, %v", v, err)
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range rounds / 10 {
				synctest.Test(t, func(t *testing.T) {
					for range 10 {
						if v, err := future.Block(context.Background(), future.Future[int](&wakeLater{})); err != nil || v != 1 {
							t.Errorf("in a bubble: Block = %d, %v", v, err)
						}
					}
				})
			}
		})
	}
	wg.Wait()
}
