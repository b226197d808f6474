package scheduler_test

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// liveTracker counts, from the futures themselves, how many are live (first
// polled and not yet returned ready), and the most at once.
type liveTracker struct {
	cur, max atomic.Int64
}

func (l *liveTracker) enter() {
	n := l.cur.Add(1)
	for m := l.max.Load(); n > m && !l.max.CompareAndSwap(m, n); m = l.max.Load() {
	}
}

func (l *liveTracker) leave() { l.cur.Add(-1) }

// tracked returns a future that is live from its first poll until lt opens
// (if lt is not nil) and it yielded once more.
func tracked(lt *liveTracker, l *latch) future.Future[int] {
	started := false
	var y scheduler.YieldFuture
	return future.PollFn(func(cx *future.Context) (int, bool) {
		if !started {
			started = true
			lt.enter()
		}
		if l != nil && !l.poll(cx) {
			return 0, false
		}
		if _, ok := y.Poll(cx); !ok {
			return 0, false
		}
		lt.leave()
		return 1, true
	})
}

// TestTrySpawnBackpressure: with MaxLiveTasks = K, TrySpawn from many
// goroutines at once admits exactly K tasks while none finishes and refuses
// the rest with ErrBackpressure; it admits again once tasks finished; under
// churn the futures never see more than K of them live; Spawn ignores the
// limit.
func TestTrySpawnBackpressure(t *testing.T) {
	const k = 16
	e := newEnv(t, scheduler.Config{Workers: 4, MaxLiveTasks: k})
	var lt liveTracker

	// Phase 1: nobody finishes, many goroutines try.
	l := &latch{}
	var admitted, refused atomic.Int64
	var mu sync.Mutex
	var handles []scheduler.JoinHandle[int]
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				h, err := scheduler.TrySpawn(e.s, nil, tracked(&lt, l))
				switch {
				case err == nil:
					admitted.Add(1)
					mu.Lock()
					handles = append(handles, h)
					mu.Unlock()
				case errors.Is(err, scheduler.ErrBackpressure):
					refused.Add(1)
				default:
					e.failf("TrySpawn: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int64(k), admitted.Load())
	require.Equal(t, int64(8*50-k), refused.Load())
	require.Equal(t, int64(k), e.s.Stats().Live)

	// Spawn is not bounded.
	var spawned []scheduler.JoinHandle[int]
	for range 2 * k {
		spawned = append(spawned, scheduler.Spawn(e.s, nil, tracked(&lt, l)))
	}
	require.Equal(t, int64(3*k), e.s.Stats().Live)
	_, err := scheduler.TrySpawn(e.s, nil, future.Ready(0))
	require.ErrorIs(t, err, scheduler.ErrBackpressure)

	l.Open()
	for _, h := range append(handles, spawned...) {
		_, err := wait(e, h, "admitted task")
		require.NoError(t, err)
	}
	require.Zero(t, e.s.Stats().Live)

	// Admits again.
	h, err := scheduler.TrySpawn(e.s, nil, future.Ready(3))
	require.NoError(t, err)
	v, err := wait(e, h, "after the others finished")
	require.NoError(t, err)
	require.Equal(t, 3, v)

	// Phase 2: churn. Tasks finish while goroutines keep trying.
	lt.max.Store(0)
	n := 400
	if testing.Short() {
		n = 100
	}
	handles = handles[:0]
	admitted.Store(0)
	refused.Store(0)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				h, err := scheduler.TrySpawn(e.s, nil, tracked(&lt, nil))
				if err == nil {
					admitted.Add(1)
					mu.Lock()
					handles = append(handles, h)
					mu.Unlock()
				} else {
					refused.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for _, h := range handles {
		_, err := wait(e, h, "churn task")
		require.NoError(t, err)
	}
	t.Logf("churn: %d admitted, %d refused, at most %d live", admitted.Load(), refused.Load(), lt.max.Load())
	require.LessOrEqual(t, lt.max.Load(), int64(k))
	require.Positive(t, admitted.Load())
	require.Zero(t, e.s.Stats().Live)
}

// TestTrySpawnRefusalDoesNotInflateLive: with the limit reached and nothing
// finishing, goroutines keep calling TrySpawn (all refused) while another
// reads Stats: Live must stay at the number of tasks that exist. TrySpawn
// reserves with Add(1) and undoes a failed reservation with Add(-1), so
// for a moment a refused spawn is counted: Live reads above MaxLiveTasks,
// and a TrySpawn racing it can be refused though a slot is free.
func TestTrySpawnRefusalDoesNotInflateLive(t *testing.T) {
	const k = 4
	e := newEnv(t, scheduler.Config{Workers: 2, MaxLiveTasks: k})
	l := &latch{}
	var hs []scheduler.JoinHandle[int]
	for range k {
		h, err := scheduler.TrySpawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) { return 0, l.poll(cx) }))
		require.NoError(t, err)
		hs = append(hs, h)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := scheduler.TrySpawn(e.s, nil, future.Ready(0)); !errors.Is(err, scheduler.ErrBackpressure) {
					e.failf("TrySpawn at the limit: %v", err)
				}
			}
		}()
	}
	var maxLive int64
	for deadline := time.Now().Add(time.Second); maxLive <= k && time.Now().Before(deadline); {
		maxLive = max(maxLive, e.s.Stats().Live)
	}
	stop.Store(true)
	wg.Wait()
	l.Open()
	for _, h := range hs {
		_, err := wait(e, h, "latched")
		require.NoError(t, err)
	}
	require.Equal(t, int64(k), maxLive, "Stats().Live with %d tasks alive", k)
}

// TestJoinedTaskFreesItsSlot: once a task's handle has returned its
// outcome, the task no longer counts as live, so a TrySpawn right after
// the join is admitted under MaxLiveTasks = 1, and Stats().Live reads 0
// (with and without the limit). Each round races the finishing worker
// against the joiner.
func TestJoinedTaskFreesItsSlot(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	for _, limit := range []int{0, 1} {
		e := newEnv(t, scheduler.Config{Workers: 2, MaxLiveTasks: limit})
		for i := range rounds {
			var y scheduler.YieldFuture
			h, err := scheduler.TrySpawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
				_, ok := y.Poll(cx)
				return i, ok
			}))
			require.NoError(t, err, "round %d, limit %d: the last joined task still holds its slot", i, limit)
			// Watch for the finish as closely as a joiner can: the
			// moment IsFinished reports true, the slot must be free.
			for !h.IsFinished() {
				runtime.Gosched()
			}
			require.Zero(t, e.s.Stats().Live, "round %d, limit %d: live once finished", i, limit)
			v, err := wait(e, h, "yielding task")
			require.NoError(t, err)
			require.Equal(t, i, v)
			require.Zero(t, e.s.Stats().Live, "round %d, limit %d: live after the join", i, limit)
		}
	}
}
