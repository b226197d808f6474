package syncprim

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/stretchr/testify/require"
)

// rwChurn starts goroutines and tasks that take l for reading (or writing)
// in a loop until stop, holding it a little so that holds overlap.
func rwChurn(t *testing.T, sch *scheduler.Scheduler, l *RwLock, write bool, n int, stop *atomic.Bool) (wait func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for !stop.Load() {
				if write {
					g, err := l.LockBlocking(context.Background())
					require.NoError(t, err)
					time.Sleep(10 * time.Microsecond)
					g.Unlock()
				} else {
					g, err := l.RLockBlocking(context.Background())
					require.NoError(t, err)
					time.Sleep(10 * time.Microsecond)
					g.Unlock()
				}
			}
		})
	}
	var hs []scheduler.JoinHandle[struct{}]
	for range n {
		var rh rlockHolder
		var wh wlockHolder
		waiting := false
		hs = append(hs, spawnFn(sch, func(cx *future.Context) bool {
			for i := 0; ; i++ {
				if !waiting {
					if stop.Load() {
						return true
					}
					if write {
						wh.f = *l.Lock()
					} else {
						rh.f = *l.RLock()
					}
					waiting = true
				}
				if write {
					g, ok := wh.f.Poll(cx)
					if !ok {
						return false
					}
					g.Unlock()
				} else {
					g, ok := rh.f.Poll(cx)
					if !ok {
						return false
					}
					g.Unlock()
				}
				waiting = false
				if i%16 == 15 {
					cx.Waker().Wake() // yield to the scheduler
					return false
				}
			}
		}))
	}
	return func() {
		wg.Wait()
		waitAll(t, hs...)
	}
}

// TestRwLockWriterNotStarved: a writer gets in while readers keep the lock
// read-held with overlapping holds.
func TestRwLockWriterNotStarved(t *testing.T) {
	sch := newScheduler(t, 2)
	var l RwLock
	var stop atomic.Bool
	wait := rwChurn(t, sch, &l, false, 3, &stop)
	time.Sleep(2 * time.Millisecond)
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		g, err := l.LockBlocking(ctx)
		cancel()
		require.NoError(t, err, "writer starved")
		g.Unlock()
	}
	stop.Store(true)
	wait()
	require.Equal(t, int64(MaxReaders), l.c.available(MaxReaders))
}

// TestRwLockReadersNotStarved: a reader gets in while writers keep taking
// the lock one after another.
func TestRwLockReadersNotStarved(t *testing.T) {
	sch := newScheduler(t, 2)
	var l RwLock
	var stop atomic.Bool
	wait := rwChurn(t, sch, &l, true, 3, &stop)
	time.Sleep(2 * time.Millisecond)
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		g, err := l.RLockBlocking(ctx)
		cancel()
		require.NoError(t, err, "reader starved")
		g.Unlock()
	}
	stop.Store(true)
	wait()
	require.Equal(t, int64(MaxReaders), l.c.available(MaxReaders))
}

// TestRwLockExclusion: writers increment a plain int, readers read it and
// check that no writer is inside; tasks and goroutines together; -race
// reports any overlap of a writer with anyone.
func TestRwLockExclusion(t *testing.T) {
	n := 400_000
	if testing.Short() {
		n = 16_000
	}
	sch := newScheduler(t, 3)
	var l RwLock
	var (
		value   int
		writers atomic.Int32
		readers atomic.Int32
		maxRead atomic.Int32
	)
	write := func() {
		if writers.Add(1) != 1 || readers.Load() != 0 {
			t.Error("writer not alone")
		}
		value++
		writers.Add(-1)
	}
	read := func() {
		r := readers.Add(1)
		if r > maxRead.Load() {
			maxRead.Store(r)
		}
		if writers.Load() != 0 {
			t.Error("reader with a writer")
		}
		_ = value
		readers.Add(-1)
	}
	const workers = 8
	per := n / workers
	var wg sync.WaitGroup
	for i := range workers / 2 {
		wg.Go(func() {
			for k := range per {
				if (k+i)%4 == 0 {
					g, _ := l.LockBlocking(context.Background())
					write()
					if k%8 == 0 {
						r := g.Downgrade()
						read()
						r.Unlock()
					} else {
						g.Unlock()
					}
				} else {
					g, _ := l.RLockBlocking(context.Background())
					read()
					g.Unlock()
				}
			}
		})
	}
	var hs []scheduler.JoinHandle[struct{}]
	for i := range workers / 2 {
		var rh rlockHolder
		var wh wlockHolder
		k, waiting := 0, false
		hs = append(hs, spawnFn(sch, func(cx *future.Context) bool {
			for k < per {
				isWrite := (k+i)%3 == 0
				if !waiting {
					if isWrite {
						wh.f = *l.Lock()
					} else {
						rh.f = *l.RLock()
					}
					waiting = true
				}
				if isWrite {
					g, ok := wh.f.Poll(cx)
					if !ok {
						return false
					}
					write()
					g.Unlock()
				} else {
					g, ok := rh.f.Poll(cx)
					if !ok {
						return false
					}
					read()
					g.Unlock()
				}
				waiting = false
				k++
			}
			return true
		}))
	}
	wg.Wait()
	waitAll(t, hs...)
	require.Equal(t, int64(MaxReaders), l.c.available(MaxReaders))
	require.Equal(t, 0, l.waiters())
	t.Logf("writes %d, most readers at once %d", value, maxRead.Load())
}
