package syncprim

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/stretchr/testify/require"
)

// TestSemaphoreStress has tasks and goroutines acquire random numbers of
// permits through every tier (some cancelled or timed out) and checks that
// no more than the permits are ever out and that all come back.
func TestSemaphoreStress(t *testing.T) {
	const permits = 5
	iters := 200_000
	if testing.Short() {
		iters = 8_000
	}
	sch := newScheduler(t, 3)
	s := NewSemaphore(permits)
	var out atomic.Int64
	use := func(n int) {
		if v := out.Add(int64(n)); v > permits {
			t.Errorf("%d permits out of %d", v, permits)
		}
		out.Add(-int64(n))
		s.Release(n)
	}
	const workers = 8
	var wg sync.WaitGroup
	var hs []scheduler.JoinHandle[struct{}]
	for id := range workers {
		per := iters / workers
		rng := rand.New(rand.NewPCG(uint64(id), 1))
		if id%2 == 0 {
			wg.Go(func() {
				for k := range per {
					n := 1 + rng.IntN(permits)
					switch k % 3 {
					case 0:
						if s.TryAcquire(n) {
							use(n)
						}
					case 1:
						require.NoError(t, s.AcquireBlocking(context.Background(), n))
						use(n)
					default:
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(20))*time.Microsecond)
						if s.AcquireBlocking(ctx, n) == nil {
							use(n)
						}
						cancel()
					}
				}
			})
			continue
		}
		var h acqHolder
		k, waiting, n := 0, false, 0
		hs = append(hs, spawnFn(sch, func(cx *future.Context) bool {
			for k < per {
				if !waiting {
					n = 1 + rng.IntN(permits)
					h.f = *s.Acquire(n)
					waiting = true
				}
				if _, ok := h.f.Poll(cx); !ok {
					if k%5 == 0 { // abandoned after registering
						h.f.Cancel()
						waiting = false
						k++
						continue
					}
					return false
				}
				waiting = false
				use(n)
				k++
			}
			return true
		}))
	}
	wg.Wait()
	waitAll(t, hs...)
	require.Equal(t, permits, s.Available())
	require.Equal(t, 0, s.waiters())
}

// TestSemaphoreLargeNotStarved: an Acquire of every permit gets them while
// goroutines and tasks keep acquiring and releasing one at a time.
func TestSemaphoreLargeNotStarved(t *testing.T) {
	const permits = 4
	sch := newScheduler(t, 2)
	s := NewSemaphore(permits)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for !stop.Load() {
				if s.AcquireBlocking(context.Background(), 1) == nil {
					s.Release(1)
				}
			}
		})
	}
	var hs []scheduler.JoinHandle[struct{}]
	for range 3 {
		var h acqHolder
		waiting := false
		hs = append(hs, spawnFn(sch, func(cx *future.Context) bool {
			for i := 0; ; i++ {
				if !waiting {
					if stop.Load() {
						return true
					}
					h.f = *s.Acquire(1)
					waiting = true
				}
				if _, ok := h.f.Poll(cx); !ok {
					return false
				}
				waiting = false
				s.Release(1)
				if i%64 == 63 { // let the worker breathe: re-schedule ourselves
					cx.Waker().Wake()
					return false
				}
			}
		}))
	}
	time.Sleep(5 * time.Millisecond)
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	for range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, s.AcquireBlocking(ctx, permits), "large acquire starved")
		cancel()
		s.Release(permits)
	}
	stop.Store(true)
	wg.Wait()
	waitAll(t, hs...)
	require.Equal(t, permits, s.Available())
}

// TestSemaphoreHandOffRace races Release against Cancel of granted
// futures from many tasks and goroutines: a permit handed to a future that
// is cancelled before its re-poll must reach the next waiter.
func TestSemaphoreHandOffRace(t *testing.T) {
	iters := 20_000
	if testing.Short() {
		iters = 2_000
	}
	cx, _ := newCountCx()
	for range iters {
		s := NewSemaphore(0)
		a, b := newAcq(s, 1), newAcq(s, 1)
		a.f.Poll(cx)
		b.f.Poll(cx)
		var wg sync.WaitGroup
		wg.Go(func() { s.Release(1) })
		wg.Go(func() { a.f.Cancel() })
		wg.Wait()
		// Whoever won, the one permit is b's now.
		err, ok := b.f.Poll(cx)
		require.True(t, ok)
		require.NoError(t, err)
		require.Equal(t, 0, s.Available())
		require.Equal(t, 0, s.waiters())
	}
}

// TestSemaphoreBlockingCancelRace races a Release against the ctx of a
// queued AcquireBlocking: whichever wins, exactly one permit ends up free
// once the goroutine gives back what it got.
func TestSemaphoreBlockingCancelRace(t *testing.T) {
	iters := 5_000
	if testing.Short() {
		iters = 500
	}
	for range iters {
		s := NewSemaphore(0)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- s.AcquireBlocking(ctx, 1) }()
		for s.waiters() == 0 {
			time.Sleep(time.Microsecond)
		}
		var wg sync.WaitGroup
		wg.Go(func() { s.Release(1) })
		wg.Go(cancel)
		wg.Wait()
		if err := <-errc; err == nil {
			s.Release(1)
		} else {
			require.ErrorIs(t, err, context.Canceled)
		}
		require.Equal(t, 1, s.Available())
		require.Equal(t, 0, s.waiters())
	}
}
