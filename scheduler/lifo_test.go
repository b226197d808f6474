package scheduler_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

type lifoMode struct {
	name string
	lifo int
}

// lifoModes are the modes with a LIFO; allLIFOModes adds LIFOOff.
var (
	lifoModes    = []lifoMode{{"slot", scheduler.LIFOSlot}, {"stack", scheduler.LIFOStack}}
	allLIFOModes = append(lifoModes[:len(lifoModes):len(lifoModes)], lifoMode{"off", scheduler.LIFOOff})
)

// parkDriver is a Driver that fires the waker armed by a task only from the
// Maintain a worker runs while it transitions to park, through that
// worker's Context, and then reports nothing pending (no park timeout): if
// the wake went to the parking worker's LIFO slot, nobody would ever run
// the task.
type parkDriver struct {
	s            atomic.Pointer[scheduler.Scheduler]
	mu           sync.Mutex
	wk           waker.Waker
	firedParking atomic.Int32
}

func (d *parkDriver) arm(wk waker.Waker) {
	d.mu.Lock()
	d.wk = wk
	d.mu.Unlock()
}

func (d *parkDriver) Maintain(cx *future.Context) time.Duration {
	s := d.s.Load()
	if s == nil || !scheduler.IsParking(s, cx) {
		return -1
	}
	d.mu.Lock()
	wk := d.wk
	d.wk = waker.Waker{}
	d.mu.Unlock()
	if !wk.IsZero() {
		d.firedParking.Add(1)
		cx.Wake(wk)
	}
	return -1
}

// TestDriverWakeWhileParkingIsNotStranded: a Driver whose Maintain wakes a
// task through cx.Wake while the worker is about to park must not leave the
// task in that worker's LIFO slot (the transitioning-to-park flag sends it
// to the global queue and notifies): the task runs promptly though every
// worker then parks with no timeout.
func TestDriverWakeWhileParkingIsNotStranded(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 20
	}
	for _, workers := range []int{1, 2} {
		for _, m := range allLIFOModes {
			t.Run(fmt.Sprintf("workers=%d/%s", workers, m.name), func(t *testing.T) {
				d := &parkDriver{}
				e := newEnv(t, scheduler.Config{Workers: workers, LIFO: m.lifo, Driver: d})
				d.s.Store(e.s)
				for r := range rounds {
					armed := false
					p := newProbe(e, "driven", func(cx *future.Context) (int, bool) {
						if armed {
							return r, true
						}
						armed = true
						d.arm(cx.Waker())
						return 0, false
					})
					v, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[int](p)), fmt.Sprintf("round %d", r))
					require.NoError(t, err)
					require.Equal(t, r, v)
					require.Equal(t, int32(2), p.polls.Load())
				}
				require.Equal(t, int32(rounds), d.firedParking.Load(), "every wake came from a parking worker's Maintain")
			})
		}
	}
}

// timerDriver is a one-timer Driver: Maintain fires the armed waker once
// its deadline passed and otherwise returns the time left, which is the
// parking workers' timeout.
type timerDriver struct {
	mu       sync.Mutex
	deadline time.Time
	wk       waker.Waker
}

func (d *timerDriver) Maintain(cx *future.Context) time.Duration {
	d.mu.Lock()
	if d.wk.IsZero() {
		d.mu.Unlock()
		return -1
	}
	if left := time.Until(d.deadline); left > 0 {
		d.mu.Unlock()
		return left
	}
	wk := d.wk
	d.wk = waker.Waker{}
	d.mu.Unlock()
	cx.Wake(wk)
	return -1
}

// TestDriverTimeoutWakesParkedWorkers: the duration Maintain returns bounds
// the park, so a timer with nobody to notify still fires.
func TestDriverTimeoutWakesParkedWorkers(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			d := &timerDriver{}
			e := newEnv(t, scheduler.Config{Workers: workers, Driver: d})
			const sleep = 20 * time.Millisecond
			var start time.Time
			h := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (time.Duration, bool) {
				if !start.IsZero() {
					return time.Since(start), true
				}
				start = time.Now()
				d.mu.Lock()
				d.deadline, d.wk = start.Add(sleep), cx.Waker()
				d.mu.Unlock()
				return 0, false
			}))
			slept, err := wait(e, h, "sleeper")
			require.NoError(t, err)
			require.GreaterOrEqual(t, slept, sleep)
			require.Less(t, slept, 2*time.Second)
		})
	}
}

// waitAllParked waits until every worker of e is parked, so that the next
// task from outside starts a fresh tick.
func waitAllParked(t *testing.T, e *env) {
	t.Helper()
	eventually(t, func() bool { return scheduler.ParkedWorkers(e.s) == e.s.Workers() }, "all workers parked")
}

// TestSpawnFromTaskRunsNextOnSameWorker: a task spawned from inside a task
// (Spawn with the poll's cx) goes to the LIFO and is the very next task its
// worker polls, with the slot and with the stack.
func TestSpawnFromTaskRunsNextOnSameWorker(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 15
	}
	for _, m := range lifoModes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, scheduler.Config{Workers: 4, LIFO: m.lifo})
			last := make([]atomic.Int64, 4) // per worker: id of the last task it polled
			for r := range rounds {
				waitAllParked(t, e)
				parentID, childID := int64(2*r+1), int64(2*r+2)
				var parentWorker int
				child := future.PollFn(func(cx *future.Context) (int, bool) {
					prev := last[cx.Worker()].Swap(childID)
					if cx.Worker() != parentWorker || prev != parentID {
						e.failf("round %d: child ran on worker %d after task %d; parent ran on %d", r, cx.Worker(), prev, parentWorker)
					}
					return cx.Worker(), true
				})
				parent := future.PollFn(func(cx *future.Context) (scheduler.JoinHandle[int], bool) {
					last[cx.Worker()].Store(parentID)
					parentWorker = cx.Worker()
					return scheduler.Spawn(e.s, cx, child), true
				})
				hc, err := wait(e, scheduler.Spawn(e.s, nil, parent), "parent")
				require.NoError(t, err)
				_, err = wait(e, hc, "child")
				require.NoError(t, err)
			}
			e.checkNow()
			e.shutdown()
			require.Equal(t, uint64(rounds), sumWorkers(e.s.Stats(), func(w scheduler.WorkerStats) uint64 { return w.LIFOHits }))
		})
	}
}

// TestLIFOPollsAreBounded: two tasks that wake each other through cx.Wake
// keep each other in the LIFO of the only worker; a third task waiting in
// the local queue must still run, after at most MaxLIFOPollsPerTick
// ping-pong polls (with LIFOOff, before any: it is queued first).
func TestLIFOPollsAreBounded(t *testing.T) {
	for _, m := range allLIFOModes {
		t.Run(m.name, func(t *testing.T) {
			e := newEnv(t, scheduler.Config{Workers: 1, LIFO: m.lifo})
			var (
				wakers   [2]waker.Waker // written by the first polls, read by later ones (same worker)
				stop     atomic.Bool
				pingPong atomic.Int64
			)
			pingers := make([]scheduler.JoinHandle[int], 2)
			for i := range 2 {
				first := true
				pingers[i] = scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
					if first {
						first = false
						wakers[i] = cx.Waker()
						return 0, false
					}
					n := pingPong.Add(1)
					cx.Wake(wakers[1-i])
					if stop.Load() {
						return int(n), true
					}
					return 0, false
				}))
			}
			eventually(t, func() bool { return e.s.Stats().PerWorker[0].Polled >= 2 }, "pingers polled")
			var before int64 = -1
			third := future.PollFn(func(*future.Context) (int64, bool) {
				before = pingPong.Load()
				stop.Store(true)
				return before, true
			})
			var hThird scheduler.JoinHandle[int64]
			root := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
				hThird = scheduler.Spawn(e.s, cx, third) // to the LIFO...
				cx.Wake(wakers[0])                       // ...then behind a pinger
				return 0, true
			}))
			_, err := wait(e, root, "root")
			require.NoError(t, err)
			n, err := wait(e, hThird, "third task, behind the ping-pong (LIFO starvation)")
			require.NoError(t, err)
			t.Logf("ping-pong polls before the third task ran: %d", n)
			require.LessOrEqual(t, n, int64(scheduler.MaxLIFOPollsPerTick))
			for i, h := range pingers {
				_, err := wait(e, h, fmt.Sprintf("pinger %d", i))
				require.NoError(t, err)
			}
		})
	}
}

// TestLIFOOffRunsWhatABlockedTaskSpawned: with LIFOOff, the tasks that a
// task spawns or wakes before it blocks its worker go to that worker's
// local queue, with a notification, so that another worker runs them
// while the poll goes on; the blocked task waits for all of them. (With a
// LIFO, the last of them would wait for the poll to end.)
func TestLIFOOffRunsWhatABlockedTaskSpawned(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	e := newEnv(t, scheduler.Config{Workers: 2, LIFO: scheduler.LIFOOff})
	for r := range rounds {
		const children = 3
		ran := make(chan int, children+1)
		var sleeper waker.Waker
		var sleeperMu sync.Mutex
		hSleeper := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
			sleeperMu.Lock()
			defer sleeperMu.Unlock()
			if sleeper.IsZero() {
				sleeper = cx.Waker()
				return 0, false
			}
			ran <- -1
			return 0, true
		}))
		eventually(t, func() bool { sleeperMu.Lock(); defer sleeperMu.Unlock(); return !sleeper.IsZero() }, "sleeper polled")
		parent := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
			for i := range children {
				scheduler.Spawn(e.s, cx, future.PollFn(func(*future.Context) (int, bool) {
					ran <- i
					return i, true
				})).Detach()
			}
			sleeperMu.Lock()
			cx.Wake(sleeper) // a wake, the last thing queued
			sleeperMu.Unlock()
			// Blocks its worker until the others ran elsewhere.
			timeout := time.After(10 * time.Second)
			for range children + 1 {
				select {
				case <-ran:
				case <-timeout:
					e.failf("round %d: what the blocked task spawned and woke did not run beside it", r)
					return 0, true
				}
			}
			return r, true
		}))
		v, err := wait(e, parent, "parent")
		require.NoError(t, err)
		require.Equal(t, r, v)
		_, err = wait(e, hSleeper, "sleeper")
		require.NoError(t, err)
	}
	e.checkNow()
	e.shutdown()
	require.Zero(t, sumWorkers(e.s.Stats(), func(w scheduler.WorkerStats) uint64 { return w.LIFOHits }))
}
