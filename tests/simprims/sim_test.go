package simprims

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/sim"
)

// Seeds per strategy and workload: few with -short (CI's short mode), more
// without; -sim.seeds overrides both (mage sim runs thousands).
const (
	shortSeeds = 150
	fullSeeds  = 1000
)

// seeds is the count of seeds each Check runs.
func seeds() int {
	if testing.Short() {
		return shortSeeds
	}
	return fullSeeds
}

// simulate runs workload on a simulated host under each strategy, PCT
// (depth 3, for bugs that need up to two ordering constraints, over runs
// of about steps polls) and Random, each over seeds(), in subtests "pct"
// and "random". The workload's error fails the seed, and so does a wait
// that can never end (sim.ErrDeadlock: a lost wakeup) or a run far past
// its expected length (sim.ErrStepLimit: a livelock or a starved task).
// With -v it logs the runs' lengths, by which steps is set.
func simulate(t *testing.T, steps int, workload func() future.Future[error]) {
	t.Helper()
	strategies := []struct {
		name string
		s    sim.Strategy
	}{
		{"pct", sim.PCT(3, steps)},
		{"random", sim.Random()},
	}
	for _, st := range strategies {
		t.Run(st.name, func(t *testing.T) {
			var runs stepStats
			t.Cleanup(func() { t.Logf("%s: %s", st.name, runs.String()) })
			sim.Check(t, sim.Options{Strategy: st.s, MaxSteps: 100*steps + 1000}, seeds(), func(t *testing.T, w *sim.World) {
				err := runWorkload(w, workload())
				runs.add(w.Steps())
				if err != nil {
					t.Fatalf("after %d steps: %v", w.Steps(), err)
				}
			})
		})
	}
}

// runWorkload runs f on a new runtime of a host of w, driving the world
// until f completes, and returns its error or the world's.
func runWorkload(w *sim.World, f future.Future[error]) error {
	rt, err := blitz.New(w.MustHost("a", "10.0.0.1").Config())
	if err != nil {
		return err
	}
	werr, err := blitz.BlockOn(context.Background(), rt.Handle(), f)
	if err != nil {
		return err
	}
	return werr
}

// One test per workload (doc.go says what each checks). The second
// argument of simulate is the workload's average run length in polls, as
// measured (go test -v logs it), for PCT's change points.

func TestMutex(t *testing.T) {
	simulate(t, 75, func() future.Future[error] { return mutexWorkloadAsync(4, 10) })
}

func TestRwLock(t *testing.T) {
	simulate(t, 90, func() future.Future[error] { return rwLockWorkloadAsync(3, 2, 8) })
}

func TestSemaphore(t *testing.T) {
	simulate(t, 75, func() future.Future[error] { return semaphoreWorkloadAsync(3, 5, 8) })
}

// stepStats gathers the lengths of a Check's runs, which the seeds run in
// parallel, to tell whether the steps given to PCT fit the workload.
type stepStats struct {
	mu              sync.Mutex
	runs, sum, most int
}

func (s *stepStats) add(steps int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	s.sum += steps
	s.most = max(s.most, steps)
}

func (s *stepStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == 0 {
		return "no runs"
	}
	return fmt.Sprintf("%d runs, %d steps on average, %d at most", s.runs, s.sum/s.runs, s.most)
}

func TestBarrier(t *testing.T) {
	simulate(t, 50, func() future.Future[error] { return barrierWorkloadAsync(4, 8) })
}

func TestNotify(t *testing.T) {
	simulate(t, 60, func() future.Future[error] { return notifyWorkloadAsync(4, 20) })
}

func TestOnceCell(t *testing.T) {
	simulate(t, 25, func() future.Future[error] { return onceCellWorkloadAsync(8, 4) })
}

func TestBounded(t *testing.T) {
	simulate(t, 80, func() future.Future[error] { return boundedWorkloadAsync(2, 3, 3, 10, false) })
}

func TestBoundedCloseEarly(t *testing.T) {
	simulate(t, 25, func() future.Future[error] { return boundedWorkloadAsync(1, 3, 2, 10, true) })
}

func TestUnbounded(t *testing.T) {
	simulate(t, 50, func() future.Future[error] { return unboundedWorkloadAsync(3, 10) })
}

func TestOneshot(t *testing.T) {
	simulate(t, 25, func() future.Future[error] { return oneshotWorkloadAsync(6) })
}

func TestBroadcast(t *testing.T) {
	simulate(t, 45, func() future.Future[error] { return broadcastWorkloadAsync(2, 3, 16) })
}

func TestWatch(t *testing.T) {
	simulate(t, 35, func() future.Future[error] { return watchWorkloadAsync(3, 12) })
}

func TestJoinSet(t *testing.T) {
	simulate(t, 45, func() future.Future[error] { return joinSetWorkloadAsync(8, 3) })
}

func TestJoinHandle(t *testing.T) {
	simulate(t, 30, func() future.Future[error] { return joinHandleWorkloadAsync(3) })
}
