package scheduler_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// A worker wakes Go's sysmon once in a spell of work that lasts past 10 ms,
// and not again until it has parked and worked that long once more; a
// spell shorter than that does not wake it.
func TestBusyWorkerWakesSysmonOncePerSpell(t *testing.T) {
	var wakes atomic.Int32
	// Restored by a cleanup registered before newEnv's, so after the
	// shutdown: the worker reads the variable until it stops.
	t.Cleanup(scheduler.SetWakeSysmon(func() { wakes.Add(1) }))
	e := newEnv(t, scheduler.Config{Workers: 1})
	// busy runs a task that yields until d has passed since its first
	// poll, and waits for the worker to park after it.
	busy := func(d time.Duration) {
		t.Helper()
		parked := e.s.Stats().PerWorker[0].Parked
		var end time.Time
		h := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
			if end.IsZero() {
				end = time.Now().Add(d)
			}
			if time.Now().Before(end) {
				cx.Yield()
				return 0, false
			}
			return 0, true
		}))
		if _, err := wait(e, h, "busy task"); err != nil {
			t.Fatal(err)
		}
		eventually(t, func() bool { return e.s.Stats().PerWorker[0].Parked > parked }, "the worker parks after the task")
	}
	busy(50 * time.Millisecond)
	if n := wakes.Load(); n != 1 {
		t.Fatalf("%d sysmon wakes in a 50 ms spell, want 1", n)
	}
	busy(50 * time.Millisecond)
	if n := wakes.Load(); n != 2 {
		t.Fatalf("%d sysmon wakes after a second 50 ms spell, want 2", n)
	}
	start := time.Now()
	busy(0)
	if n := wakes.Load(); n != 2 && time.Since(start) < 5*time.Millisecond {
		t.Fatalf("%d sysmon wakes after a spell of one poll, want 2", n)
	}
}
