package scheduler_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/scheduler"
)

// burstTask records the address of the task running it and whether it runs
// on the scheduler that spawned it, then counts down.
type burstTask struct {
	s       *scheduler.Scheduler
	slot    **header.Header
	foreign *atomic.Int32
	wg      *sync.WaitGroup
}

func (b burstTask) Poll(cx *future.Context) (struct{}, bool) {
	*b.slot = cx.Task().(*header.Header)
	if cx.Executor() != b.s {
		b.foreign.Add(1)
	}
	b.wg.Done()
	return struct{}{}, true
}

// spawnBurst spawns n burstTasks on s from outside its workers, all at
// once, and waits for them; it returns the addresses of the tasks that ran
// them.
func spawnBurst(t *testing.T, s *scheduler.Scheduler, n int, foreign *atomic.Int32) []*header.Header {
	seen := make([]*header.Header, n)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		scheduler.SpawnValueDetached[struct{}](s, nil, burstTask{s: s, slot: &seen[i], foreign: foreign, wg: &wg})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatalf("burst of %d did not finish; stats %+v", n, s.Stats())
	}
	return seen
}

// TestSpawnFromOutsideReusesSpares: bursts of detached tasks spawned from
// outside the workers, more at once than the workers' slots hold, reuse
// the tasks of the bursts before (through the scheduler's spares) instead
// of allocating each; and a spare never crosses to another scheduler, even
// for a task of the same type spawned on both in turn.
func TestSpawnFromOutsideReusesSpares(t *testing.T) {
	a := newEnv(t, scheduler.Config{Workers: 2})
	b := newEnv(t, scheduler.Config{Workers: 2})
	n, rounds := 1000, 5
	if testing.Short() {
		n = 300
	}
	var foreign atomic.Int32
	all := map[*header.Header]bool{}
	ofA := map[*header.Header]bool{}
	for range rounds {
		for _, h := range spawnBurst(t, a.s, n, &foreign) {
			all[h], ofA[h] = true, true
		}
		for _, h := range spawnBurst(t, b.s, n, &foreign) {
			require.False(t, ofA[h], "a task object of one scheduler ran a task of another")
			all[h] = true
		}
	}
	require.Zero(t, foreign.Load(), "tasks ran on a scheduler other than their spawner's")
	spawned := 2 * n * rounds
	t.Logf("%d spawns from outside ran in %d task objects", spawned, len(all))
	if !raceEnabled { // the race detector's sync.Pool drops a share of what it is given
		require.LessOrEqual(t, len(all), spawned/2, "spawns from outside reuse finished tasks")
	}
	eventually(t, func() bool { return a.s.Stats().Live == 0 && b.s.Stats().Live == 0 }, "live back to 0")
}
