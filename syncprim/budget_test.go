package syncprim

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// TestMutexContendersOnOneWorkerInterleave: four tasks on one worker each
// lock and unlock a Mutex 1,000 times. The lock is always free when a task
// asks (each unlocks before it locks again), so without a budget the first
// task would take all its 1,000 locks in one poll, then the second, and
// the tasks would never contend. With the budget no poll takes more than
// future.TaskBudget locks, and the four tasks take turns: the sequence of
// lockers has at least 4 x (1,000 / TaskBudget) runs.
func TestMutexContendersOnOneWorkerInterleave(t *testing.T) {
	const tasks, locks = 4, 1000
	s := newScheduler(t, 1)
	var m Mutex
	var start Notify
	var arrived atomic.Int32
	var order []int    // who locked, in order; appended under m
	var maxPerPoll int // most locks one poll took; written under m
	hs := make([]scheduler.JoinHandle[struct{}], tasks)
	for id := range tasks {
		var gate NotifiedFuture
		var lf LockFuture
		var phase, done int
		hs[id] = spawnFn(s, func(cx *future.Context) bool {
			if phase == 0 {
				gate, phase = *start.Notified(), 1
				defer arrived.Add(1) // after the registration
			}
			if phase == 1 {
				if _, ok := gate.Poll(cx); !ok {
					return false
				}
				phase = 2
				lf = *m.Lock()
			}
			thisPoll := 0
			for done < locks {
				g, ok := lf.Poll(cx)
				if !ok {
					return false
				}
				order = append(order, id)
				thisPoll++
				maxPerPoll = max(maxPerPoll, thisPoll)
				g.Unlock()
				done++
				lf = *m.Lock()
			}
			return true
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for arrived.Load() < tasks {
		require.True(t, time.Now().Before(deadline), "the tasks did not all reach the gate")
		time.Sleep(time.Millisecond)
	}
	start.NotifyWaiters()
	waitAll(t, hs...)
	require.Len(t, order, tasks*locks)
	runs := 1
	for i := 1; i < len(order); i++ {
		if order[i] != order[i-1] {
			runs++
		}
	}
	t.Logf("%d runs, at most %d locks in one poll", runs, maxPerPoll)
	require.LessOrEqual(t, maxPerPoll, future.TaskBudget, "locks taken in one poll")
	require.GreaterOrEqual(t, runs, tasks*(locks/future.TaskBudget)/2, "runs of one task in the order of locking")
}
