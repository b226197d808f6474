package syncprim

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

const benchBarrierParties = 4

// BenchmarkBarrier: 4 parties doing b.N rounds; op = one round.
func BenchmarkBarrier(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		b.ReportAllocs()
		s := newScheduler(b, 2)
		bar := NewBarrier(benchBarrierParties)
		b.ResetTimer()
		hs := make([]scheduler.JoinHandle[struct{}], benchBarrierParties)
		for i := range hs {
			var f BarrierFuture
			waiting, round := false, 0
			hs[i] = spawnFn(s, func(cx *future.Context) bool {
				for round < b.N {
					if !waiting {
						f = *bar.Wait()
						waiting = true
					}
					if _, ok := f.Poll(cx); !ok {
						return false
					}
					waiting = false
					round++
				}
				return true
			})
		}
		waitAll(b, hs...)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		b.ReportAllocs()
		bar := NewBarrier(benchBarrierParties)
		var wg sync.WaitGroup
		for range benchBarrierParties {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range b.N {
					_, _ = bar.WaitBlocking(context.Background())
				}
			}()
		}
		wg.Wait()
	})
	// waitGroup is the Go equivalent: a reusable generation barrier on
	// sync.Mutex + sync.Cond (a sync.WaitGroup cannot be reused by the
	// same parties round after round without a second synchronization).
	b.Run("waitGroup", func(b *testing.B) {
		b.ReportAllocs()
		bar := newCondBarrier(benchBarrierParties)
		var wg sync.WaitGroup
		for range benchBarrierParties {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range b.N {
					bar.wait()
				}
			}()
		}
		wg.Wait()
	})
}

// condBarrier is the classic sync.Cond generation barrier.
type condBarrier struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n     int
	count int    // guarded by mu
	gen   uint64 // guarded by mu
}

func newCondBarrier(n int) *condBarrier {
	c := &condBarrier{n: n}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *condBarrier) wait() {
	c.mu.Lock()
	g := c.gen
	c.count++
	if c.count == c.n {
		c.count = 0
		c.gen++
		c.cond.Broadcast()
		c.mu.Unlock()
		return
	}
	for g == c.gen {
		c.cond.Wait()
	}
	c.mu.Unlock()
}
