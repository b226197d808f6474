package scheduler_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// TestIdleSchedulerDoesNotSpin: a scheduler that never ran a task parks
// its workers without spinning.
func TestIdleSchedulerDoesNotSpin(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2, IdleSpin: scheduler.MaxIdleSpin})
	time.Sleep(20 * time.Millisecond)
	for i, w := range e.s.Stats().PerWorker {
		require.Zero(t, w.Spins, "worker %d", i)
	}
}

// TestSpinOncePerSpellOfWork: after each spell of work a worker spins at
// most once before it parks, so a scheduler left idle stops spinning; its
// spin counts as parked time, so an idle worker's busy time stays still.
func TestSpinOncePerSpellOfWork(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1, IdleSpin: 200 * time.Microsecond})
	const spells = 20
	for range spells {
		_, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[struct{}](future.Ready(struct{}{}))), "spell")
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond) // past the spin: the worker parks
	}
	// The last spell's spin is published when the worker parks after it.
	eventually(t, func() bool { return scheduler.Asleep(e.s, 0) }, "the worker never parked")
	w := e.s.Stats().PerWorker[0]
	require.LessOrEqual(t, w.Spins, uint64(spells), "spins")
	require.Positive(t, w.Spins, "spins")
	before := e.s.Stats().PerWorker[0]
	time.Sleep(20 * time.Millisecond)
	after := e.s.Stats().PerWorker[0]
	require.Equal(t, before.Spins, after.Spins, "an idle worker spun")
	require.Equal(t, before.BusyTime, after.BusyTime, "an idle worker's busy time moved")
}

// TestSpinFindsWorkFromOutside: work that arrives while a worker spins is
// taken by the spin (a hit), not after a park and a wake-up.
func TestSpinFindsWorkFromOutside(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1, IdleSpin: scheduler.MaxIdleSpin})
	var hits uint64
	for range 200 {
		_, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[struct{}](future.Ready(struct{}{}))), "first")
		require.NoError(t, err)
		// The worker spins now, for up to a millisecond.
		_, err = wait(e, scheduler.Spawn(e.s, nil, future.Future[struct{}](future.Ready(struct{}{}))), "second")
		require.NoError(t, err)
		if hits = e.s.Stats().PerWorker[0].SpinHits; hits > 0 {
			break
		}
	}
	require.Positive(t, hits, "no spin found the work spawned during it")
}

// TestSpinOffNeverSpins: a negative IdleSpin turns spinning off.
func TestSpinOffNeverSpins(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1, IdleSpin: -1})
	var n atomic.Int32
	for range 50 {
		_, err := wait(e, scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) (struct{}, bool) {
			n.Add(1)
			return struct{}{}, true
		})), "task")
		require.NoError(t, err)
	}
	require.Equal(t, int32(50), n.Load())
	require.Zero(t, e.s.Stats().PerWorker[0].Spins)
}
