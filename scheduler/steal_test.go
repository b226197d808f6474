package scheduler_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// leaf is a task of the stealing test: it yields left times, mixing the
// three ways a task gives its worker up (the Yield future, a plain wake of
// its own waker, a wake through cx), then records its completion.
type leaf struct {
	e      *env
	id     int
	left   int
	y      scheduler.YieldFuture
	counts []atomic.Int32
	done   bool // plain: a poll on another worker must see it (race detector)
	// rootWorker is the worker the root task runs on; foreign counts the
	// leaf polls made by any other worker.
	rootWorker, foreign *atomic.Int64
}

// Poll yields, then completes with 2*id+1.
func (l *leaf) Poll(cx *future.Context) (int, bool) {
	if int64(cx.Worker()) != l.rootWorker.Load() {
		l.foreign.Add(1)
	}
	if l.done {
		l.e.failf("leaf %d: polled after completion", l.id)
	}
	for l.left > 0 {
		switch (l.id + l.left) % 3 {
		case 0:
			if _, ok := l.y.Poll(cx); !ok {
				return 0, false
			}
			l.y.Reset()
			l.left--
		case 1:
			l.left--
			cx.Waker().Wake()
			return 0, false
		default:
			l.left--
			cx.Wake(cx.Waker())
			return 0, false
		}
	}
	l.done = true
	l.counts[l.id].Add(1)
	return 2*l.id + 1, true
}

// TestStealingRunsEveryTaskExactlyOnce spawns, from inside a root task, so
// that they land in one worker's LIFO slot and local queue (and overflow to
// the global queue), tasks that yield a random number of times; the other
// workers get them only by stealing. Every task must complete exactly once
// with its own value, the live count must return to zero, and stealing must
// really have happened.
func TestStealingRunsEveryTaskExactlyOnce(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	const batch = 1000
	e := newEnv(t, scheduler.Config{Workers: 4})
	rng := rand.New(rand.NewPCG(3, 4))
	yields := make([]int, n)
	for i := range yields {
		yields[i] = rng.IntN(4)
	}
	counts := make([]atomic.Int32, n)
	handles := make([]scheduler.JoinHandle[int], 0, n)

	next := 0
	var rootWorker, foreign atomic.Int64
	root := future.PollFn(func(cx *future.Context) (int, bool) {
		first := next == 0
		if first {
			rootWorker.Store(int64(cx.Worker()))
		}
		size := batch
		if first {
			size = 100 // fits the local queue: nothing overflows to the global queue
		}
		for end := min(next+size, n); next < end; next++ {
			l := &leaf{e: e, id: next, left: yields[next], counts: counts, rootWorker: &rootWorker, foreign: &foreign}
			handles = append(handles, scheduler.Spawn(e.s, cx, future.Future[int](l)))
		}
		if first {
			// Hold the root's worker until another worker has polled a
			// leaf: the first batch sits only in this worker's LIFO and
			// local queue, so that takes a steal, prompted by the notify
			// of the local pushes. Without the wait, a slow-waking
			// platform (Wine) lets the root's worker run everything
			// before anyone steals, and the test would prove nothing.
			deadline := time.Now().Add(waitTimeout)
			for foreign.Load() == 0 {
				if time.Now().After(deadline) {
					e.failf("no other worker took any of the first batch: stealable work stranded")
					break
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
		if next < n {
			cx.Waker().Wake() // a batch a poll: the others steal meanwhile
			return 0, false
		}
		return len(handles), true
	})
	got, err := wait(e, scheduler.Spawn(e.s, nil, root), "root")
	require.NoError(t, err)
	require.Equal(t, n, got)

	ctx, cancel := context.WithTimeout(context.Background(), 3*waitTimeout)
	defer cancel()
	bad := 0
	for i, h := range handles {
		v, err := h.Wait(ctx)
		if err != nil {
			t.Fatalf("task %d: %v (lost wakeup?); stats %+v", i, err, e.s.Stats())
		}
		if v != 2*i+1 && bad < 10 {
			bad++
			t.Errorf("task %d: value %d, want %d", i, v, 2*i+1)
		}
	}
	for i := range counts {
		if c := counts[i].Load(); c != 1 && bad < 10 {
			bad++
			t.Errorf("task %d completed %d times", i, c)
		}
	}
	require.Zero(t, e.s.Stats().Live, "live tasks after every handle resolved")
	e.checkNow()

	e.shutdown() // the workers publish their last counters as they exit
	st := e.s.Stats()
	t.Logf("stats: spawned %d polled %d stolen %d parked %d", st.Spawned, st.Polled, st.Stolen, st.Parked)
	for i, w := range st.PerWorker {
		t.Logf("worker %d: %+v", i, w)
	}
	assert.Equal(t, uint64(n+1), st.Spawned)
	assert.Equal(t, uint64(n+1), sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Completed }))
	assert.Greater(t, st.Stolen, uint64(0), "no task was stolen")
	assert.Greater(t, sumWorkers(st, func(w scheduler.WorkerStats) uint64 { return w.Steals }), uint64(0))
	// Every worker but the root's polled something: the tasks spread.
	busy := 0
	for _, w := range st.PerWorker {
		if w.Polled > 0 {
			busy++
		}
	}
	assert.GreaterOrEqual(t, busy, 2, "tasks never left the spawning worker")
}
