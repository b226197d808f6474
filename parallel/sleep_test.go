package parallel_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

// runWithin runs f on a new goroutine and fails the test if it has not
// returned within d: a lost wake-up shows as a job nobody runs.
func runWithin(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: not done after %v: lost wake-up", what, d)
	}
}

// Each round waits until every worker is blocked on its condition variable,
// then injects one job: the injection alone must wake a worker.
func TestInjectIntoSleepingPoolNeverLosesWakeup(t *testing.T) {
	rounds := scale(100_000, 2_000)
	if raceEnabled && !testing.Short() {
		rounds = 20_000
	}
	p, err := parallel.NewPool(parallel.Config{Workers: 2, SleepyRounds: 1})
	require.NoError(t, err)
	defer p.Close()
	var ran atomic.Int64
	runWithin(t, 5*time.Minute, "rounds", func() {
		for i := range rounds {
			if !parallel.WaitAllAsleep(p, 10*time.Second) {
				t.Errorf("round %d: workers did not fall asleep", i)
				return
			}
			p.Run(func(*parallel.Ctx) { ran.Add(1) })
		}
	})
	require.Equal(t, int64(rounds), ran.Load())
}

// Each round, a job waits until the other worker sleeps and then joins: the
// push on its deque alone must wake the sleeper, which steals b while a
// waits for it.
func TestLocalPushWakesSleepingWorker(t *testing.T) {
	rounds := scale(2_000, 200)
	p, err := parallel.NewPool(parallel.Config{Workers: 2, SleepyRounds: 1})
	require.NoError(t, err)
	defer p.Close()
	stolen := 0
	runWithin(t, 2*time.Minute, "rounds", func() {
		for range rounds {
			p.Run(func(c *parallel.Ctx) {
				if !spinUntil(10*time.Second, func() bool { s, _, _ := parallel.Counters(p); return s == 1 && parallel.BlockedWorkers(p) == 1 }) {
					t.Error("the other worker did not fall asleep")
					return
				}
				var bRan atomic.Bool
				var thief atomic.Int32
				c.Join(func(*parallel.Ctx) {
					spinUntil(10*time.Second, bRan.Load) // only the woken worker can run b meanwhile
				}, func(c2 *parallel.Ctx) {
					thief.Store(int32(c2.WorkerIndex()))
					bRan.Store(true)
				})
				if int(thief.Load()) != c.WorkerIndex() {
					stolen++
				}
			})
		}
	})
	require.Equal(t, rounds, stolen, "b must be stolen by the woken worker every round")
}

// Latches set by a goroutine outside the pool must wake a worker that
// sleeps waiting for them.
func TestLatchSetWakesSleepingWaiter(t *testing.T) {
	p, err := parallel.NewPool(parallel.Config{Workers: 1, SleepyRounds: 1})
	require.NoError(t, err)
	defer p.Close()
	for range scale(500, 50) {
		var l parallel.OnceLatch
		done := make(chan struct{})
		go func() {
			p.Run(func(c *parallel.Ctx) { l.WaitCtx(c) })
			close(done)
		}()
		require.True(t, parallel.WaitAllAsleep(p, 10*time.Second) || l.Probe())
		l.Set()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("worker waiting on the latch was not woken")
		}
	}
}
