package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// TestStatsAfterKnownWorkload runs a workload whose counts are known
// exactly (N tasks from outside, each spawning two children from inside
// that yield once) and checks the counters after the shutdown, when every
// worker has published its last ones: Spawned, the completions, the polls
// (one per parent, two per child), Live, and that the totals are the sums
// of the per-worker counters. Stats is read concurrently during the run
// (the race detector checks that).
func TestStatsAfterKnownWorkload(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	e := newEnv(t, scheduler.Config{Workers: 2, Services: "services"})
	var polls atomic.Int64
	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Add(1)
	go func() {
		defer reader.Done()
		for {
			select {
			case <-stop:
				return
			default:
				st := e.s.Stats()
				if st.Live < 0 || st.Spawned > uint64(3*n) {
					e.failf("Stats mid-run: %+v", st)
				}
			}
		}
	}()
	var mu sync.Mutex
	var children []scheduler.JoinHandle[int]
	parents := make([]scheduler.JoinHandle[int], n)
	for i := range n {
		parents[i] = scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
			polls.Add(1)
			if cx.Services() != "services" {
				e.failf("cx.Services() = %v", cx.Services())
			}
			for range 2 {
				var y scheduler.YieldFuture
				h := scheduler.Spawn(e.s, cx, future.PollFn(func(cx *future.Context) (int, bool) {
					polls.Add(1)
					_, ok := y.Poll(cx)
					return 1, ok
				}))
				mu.Lock()
				children = append(children, h)
				mu.Unlock()
			}
			return i, true
		}))
	}
	for i, h := range parents {
		v, err := wait(e, h, fmt.Sprintf("parent %d", i))
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	mu.Lock()
	for _, h := range children {
		_, err := wait(e, h, "child")
		require.NoError(t, err)
	}
	mu.Unlock()
	close(stop)
	reader.Wait()
	require.Zero(t, e.s.Stats().Live)

	e.shutdown()
	st := e.s.Stats()
	t.Logf("%+v", st)
	require.Equal(t, 2, st.Workers)
	require.Len(t, st.PerWorker, 2)
	assert.Equal(t, uint64(3*n), st.Spawned)
	assert.Equal(t, uint64(2*n), sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Spawned }), "children are spawned by the workers")
	assert.Equal(t, uint64(3*n), sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Completed }))
	assert.Equal(t, uint64(5*n), st.Polled)
	assert.Equal(t, uint64(polls.Load()), st.Polled)
	assert.Equal(t, st.Polled, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Polled }))
	assert.Equal(t, st.Stolen, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Stolen }))
	assert.Equal(t, st.Parked, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Parked }))
	assert.LessOrEqual(t, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Steals }), st.Stolen)
	assert.LessOrEqual(t, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.LIFOHits }), st.Polled)
	assert.Positive(t, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.LIFOHits }))
	assert.Positive(t, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.GlobalBatches }))
	assert.Zero(t, st.Live)
	assert.Zero(t, st.Panicked)
	assert.Zero(t, st.Cancelled)
	assert.Zero(t, st.GlobalQueue)
	for _, w := range st.PerWorker {
		assert.Zero(t, w.LocalQueue)
	}
	e.checkNow()
}

// TestStatsLive counts live tasks as they are spawned and finish.
func TestStatsLive(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	require.Zero(t, e.s.Stats().Live)
	l := &latch{}
	var hs []scheduler.JoinHandle[int]
	for i := range 10 {
		hs = append(hs, scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
			return i, l.poll(cx)
		})))
		require.Equal(t, int64(i+1), e.s.Stats().Live)
	}
	l.Open()
	for _, h := range hs {
		_, err := wait(e, h, "latched")
		require.NoError(t, err)
	}
	require.Zero(t, e.s.Stats().Live)
}

// gatedDetached waits for its gate, as a task spawned by value without a
// handle.
type gatedDetached struct{ g *gate }

func (f *gatedDetached) Poll(cx *future.Context) (struct{}, bool) {
	return struct{}{}, f.g.poll(cx)
}

// TestLiveCountsSpawnsFromOutside: tasks spawned from outside the workers
// are counted as live from their spawn to their finish, whether they wait
// (linked, then completed by a wake from elsewhere) or complete at their
// first poll, with several goroutines spawning at once; Live never reads
// more than were spawned, and returns to 0; a spawn refused by the
// shutdown leaves no count behind.
func TestLiveCountsSpawnsFromOutside(t *testing.T) {
	spawners, each := 4, 500
	if testing.Short() {
		spawners, each = 4, 100
	}
	e := newEnv(t, scheduler.Config{Workers: 2})
	gates := make([]*gate, spawners*each)
	for i := range gates {
		gates[i] = &gate{}
	}
	var spawned atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan error, 1)
	go func() { // Live, read while the counts move, stays within what exists
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Live first: the spawns counted in it had begun by then, so
			// they returned by the load of spawned, or are in progress.
			live := e.s.Stats().Live
			if most := spawned.Load() + int64(spawners); live > most {
				sampled <- fmt.Errorf("Live %d with at most %d tasks spawned", live, most)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range spawners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if i%2 == 0 { // waits for its gate
					scheduler.SpawnValueDetached[struct{}](e.s, nil, gatedDetached{g: gates[g*each+i]})
				} else { // completes at its first poll
					scheduler.SpawnValueDetached[struct{}](e.s, nil, gatedDetached{g: openGate()})
				}
				spawned.Add(1)
			}
		}()
	}
	wg.Wait()
	waiting := int64(spawners * each / 2)
	eventually(t, func() bool { return e.s.Stats().Live == waiting }, "Live = the %d waiting tasks (is %d)", waiting, e.s.Stats().Live)
	for g := range spawners {
		for i := 0; i < each; i += 2 {
			gates[g*each+i].Open()
		}
	}
	eventually(t, func() bool { return e.s.Stats().Live == 0 }, "Live back to 0 (is %d)", e.s.Stats().Live)
	close(stop)
	require.NoError(t, <-sampled)

	require.NoError(t, e.s.Shutdown(context.Background()))
	scheduler.SpawnValueDetached[struct{}](e.s, nil, gatedDetached{g: openGate()})
	require.Zero(t, e.s.Stats().Live, "a spawn refused by the shutdown")
}

// openGate returns a gate already open.
func openGate() *gate { return &gate{open: true} }
