package scheduler_test

import (
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// namedWait is a detached task's future: pending until its gate opens.
type namedWait struct {
	g *latch
}

func (f *namedWait) Poll(cx *future.Context) (struct{}, bool) {
	if f.g.poll(cx) {
		return struct{}{}, true
	}
	return struct{}{}, false
}

// TestTaskNameShared: tasks spawned with one TaskName all show its name,
// cost no allocation for it, and keep it through the private record that
// PollTiming gives each of them; tasks spawned without one have none.
func TestTaskNameShared(t *testing.T) {
	for _, timing := range []bool{false, true} {
		e := newEnv(t, scheduler.Config{Workers: 1, PollTiming: timing})
		name := scheduler.NewTaskName("http 127.0.0.1:8080")
		g := new(latch)
		const n = 200
		spawn := func(k int, name *scheduler.TaskName) {
			for range k {
				scheduler.SpawnValueDetachedNamed[struct{}](e.s, nil, namedWait{g: g}, name)
			}
		}
		allocs := func(name *scheduler.TaskName) float64 {
			var before, after goruntime.MemStats
			goruntime.ReadMemStats(&before)
			spawn(n/2, name)
			goruntime.ReadMemStats(&after)
			return float64(after.Mallocs-before.Mallocs) / (n / 2)
		}
		unnamed := allocs(nil)
		named := allocs(name)
		t.Logf("timing %v: allocations per spawn: %.2f unnamed, %.2f named", timing, unnamed, named)
		if !timing { // with PollTiming every polled task allocates its record, named or not
			require.LessOrEqual(t, named, unnamed+0.1, "the shared name costs no allocation")
		}
		eventually(t, func() bool {
			tasks, live := e.s.Tasks()
			if live != n || len(tasks) != n {
				return false
			}
			named := 0
			for _, ti := range tasks {
				if ti.Name == "http 127.0.0.1:8080" {
					named++
				}
			}
			return named == n/2
		}, "every task listed with the shared name")
		g.Open()
		eventually(t, func() bool { _, live := e.s.Tasks(); return live == 0 }, "the tasks finished")
		time.Sleep(time.Millisecond)
	}
}
