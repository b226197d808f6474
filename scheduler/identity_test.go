package scheduler_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// waitTestGate is the wait the test futures below record.
var waitTestGate = future.NewWaitKind("TestGate", future.WaitNumber)

// TestTaskIDsUnique spawns tasks at once from several goroutines and from
// tasks on every worker (each spawning children from its polls): every id
// is non-zero and unique.
func TestTaskIDsUnique(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 4})
	goroutines, perG, parents, children := 8, 500, 16, 200
	if testing.Short() {
		perG, children = 100, 50
	}
	var mu sync.Mutex
	var ids []uint64
	add := func(id uint64) {
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perG {
				h := scheduler.Spawn[int](e.s, nil, future.Ready(1))
				add(h.ID())
				h.Detach()
			}
		}()
	}
	var hs []scheduler.JoinHandle[int]
	for range parents {
		hs = append(hs, scheduler.Spawn[int](e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
			for range children {
				h := scheduler.Spawn[int](e.s, cx, future.Ready(1))
				add(h.ID())
				h.Detach()
			}
			return 0, true
		})))
	}
	wg.Wait()
	for _, h := range hs {
		add(h.ID())
		_, err := wait(e, h, "parent")
		require.NoError(t, err)
	}
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		require.NotZero(t, id)
		require.False(t, seen[id], "id %d handed out twice", id)
		seen[id] = true
	}
	require.Len(t, seen, goroutines*perG+parents*children+parents)
}

// TestTaskNameAndParent: a Named spawn has the name on its handle, a task
// spawned from a task has the spawner's id as its parent, SetName renames
// the task being polled, and TaskID reads the id through the Context.
func TestTaskNameAndParent(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	type out struct{ self uint64 }
	var child scheduler.JoinHandle[int]
	h := scheduler.Spawn[out](e.s, nil, scheduler.Named("parent", future.PollFn(func(cx *future.Context) (out, bool) {
		self, ok := e.s.TaskID(cx)
		if !ok {
			e.failf("TaskID: not a task")
		}
		child = scheduler.Spawn[int](e.s, cx, future.PollFn(func(cx *future.Context) (int, bool) {
			if !e.s.SetName(cx, "renamed") {
				e.failf("SetName refused")
			}
			return 1, true
		}))
		return out{self: self}, true
	})))
	require.Equal(t, "parent", h.Name())
	o, err := wait(e, h, "parent")
	require.NoError(t, err)
	require.Equal(t, h.ID(), o.self)
	_, err = wait(e, child, "child")
	require.NoError(t, err)
	require.Equal(t, "renamed", child.Name())
	require.NotEqual(t, h.ID(), child.ID())
	_, ok := e.s.TaskID(future.NewContext(waker.Noop()))
	require.False(t, ok, "TaskID outside a task")
}

// gateWait is a future that waits on latch g and records the wait TestGate n.
type gateWait struct {
	g *latch
	n uint64
	// work is how long each poll takes before it looks at the gate, so
	// that even a coarse clock (Windows) measures a poll time.
	work time.Duration
}

func (f *gateWait) Poll(cx *future.Context) (int, bool) {
	time.Sleep(f.work)
	if f.g.poll(cx) {
		return 0, true
	}
	cx.Waiting(waitTestGate, f.n)
	return 0, false
}

// TestDumpListsTasks: the dump lists idle tasks with the wait their leaf
// recorded, groups identical ones with a count, shows a task in its poll as
// running, names a task's parent, and lists each task apart in DumpEach.
func TestDumpListsTasks(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2, SpawnSites: true, PollTiming: true})
	g := new(latch)
	var hs []scheduler.JoinHandle[int]
	for range 3 {
		hs = append(hs, scheduler.Spawn[int](e.s, nil, scheduler.Named("grouped", future.Future[int](&gateWait{g: g, n: 5}))))
	}
	lone := scheduler.Spawn[int](e.s, nil, scheduler.Named("lone", future.Future[int](&gateWait{g: g, n: 42, work: 20 * time.Millisecond})))
	hs = append(hs, lone)
	// running: pending once (so that it is listed), then spinning in its
	// second poll until released.
	release := make(chan struct{})
	var spinning atomic.Bool
	spin := scheduler.Spawn[int](e.s, nil, scheduler.Named("spinner", future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
		if !spinning.Load() {
			spinning.Store(true)
			cx.Waker().Wake()
			return 0, false
		}
		e.block(release, "spinner")
		return 0, true
	}))))
	eventually(t, func() bool {
		tasks, _ := e.s.Tasks()
		idle, running := 0, 0
		for _, ti := range tasks {
			switch {
			case ti.State == scheduler.TaskIdle && ti.Wait != 0:
				idle++
			case ti.State == scheduler.TaskRunning:
				running++
			}
		}
		return idle == 4 && running == 1
	}, "4 idle tasks waiting on the gate and a running one")

	var buf bytes.Buffer
	require.NoError(t, e.s.Dump(&buf))
	out := buf.String()
	t.Logf("Dump:\n%s", out)
	require.Contains(t, out, "3 tasks: idle, waiting on TestGate, \"grouped\"\n")
	require.Contains(t, out, "1 task: idle, waiting on TestGate 42, \"lone\"\n")
	require.Contains(t, out, "1 task: running, \"spinner\"\n")
	require.Contains(t, out, "spawned at ")
	require.Contains(t, out, "identity_test.go:")
	require.Contains(t, out, "(github.com/blitz-go/blitz/scheduler_test.TestDumpListsTasks)")
	// The spinner's poll has run past SlowPoll: the dump names it, and the
	// line its poll is on.
	require.Regexp(t, `LONG POLL on worker \d: task \d+ "spinner" has run \S+ in one poll without yielding`, out)
	require.Contains(t, out, "identity_test.go:148")

	buf.Reset()
	require.NoError(t, e.s.DumpEach(&buf))
	each := buf.String()
	t.Logf("DumpEach:\n%s", each)
	require.Equal(t, 3, strings.Count(each, "\"grouped\": idle "))
	require.Contains(t, each, "waiting on TestGate 42")
	require.Contains(t, each, "\"spinner\": running for ")
	require.Contains(t, each, "poll time ")

	close(release)
	g.Open()
	for _, h := range append(hs, spin) {
		_, err := wait(e, h, "dumped task")
		require.NoError(t, err)
	}
	tasks, live := e.s.Tasks()
	require.Empty(t, tasks)
	require.Zero(t, live)
}

// TestDumpParentAndStaleWait: a child shows its parent's id, and a wait
// recorded by an earlier poll is not shown once a later poll recorded none.
func TestDumpParentAndStaleWait(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	g1, g2 := new(gate), new(gate)
	var parentID atomic.Uint64
	var child scheduler.JoinHandle[int]
	var spawned atomic.Bool
	h := scheduler.Spawn[int](e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		if !spawned.Load() {
			id, _ := e.s.TaskID(cx)
			parentID.Store(id)
			// the child waits on g1 (recorded), then on g2 (not recorded)
			first := true
			child = scheduler.Spawn[int](e.s, cx, future.PollFn(func(cx *future.Context) (int, bool) {
				if first {
					if !g1.poll(cx) {
						cx.Waiting(waitTestGate, 1)
						return 0, false
					}
					first = false
				}
				if g2.poll(cx) {
					return 0, true
				}
				return 0, false
			}))
			spawned.Store(true)
		}
		return 0, true
	}))
	_, err := wait(e, h, "parent")
	require.NoError(t, err)
	find := func() (scheduler.TaskInfo, bool) {
		tasks, _ := e.s.Tasks()
		for _, ti := range tasks {
			if ti.ID == child.ID() {
				return ti, true
			}
		}
		return scheduler.TaskInfo{}, false
	}
	eventually(t, func() bool { ti, ok := find(); return ok && ti.State == scheduler.TaskIdle }, "child idle")
	ti, _ := find()
	require.Equal(t, parentID.Load(), ti.Parent)
	require.Equal(t, "TestGate 1", ti.Wait.String())
	g1.Open()
	eventually(t, func() bool { ti, ok := find(); return ok && ti.State == scheduler.TaskIdle && ti.Polls == 2 }, "child idle after its second poll")
	ti, _ = find()
	require.Zero(t, ti.Wait, "stale wait shown: %v", ti.Wait)
	g2.Open()
	_, err = wait(e, child, "child")
	require.NoError(t, err)
}

// TestDumpWhileTasksChurn takes dumps while tasks spawn, wait, wake and
// finish on every worker: under -race, the dump's reads of the tasks must
// not race with their polls, spawns, finishes or recycling.
func TestDumpWhileTasksChurn(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 4, PollTiming: true, SpawnSites: true})
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	stop := make(chan struct{})
	var dumps atomic.Int64
	var dw sync.WaitGroup
	dw.Add(1)
	go func() {
		defer dw.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var buf bytes.Buffer
			if err := e.s.Dump(&buf); err != nil {
				e.failf("Dump: %v", err)
			}
			buf.Reset()
			_ = e.s.DumpEach(&buf)
			dumps.Add(1)
		}
	}()
	for r := range rounds {
		g := new(latch)
		var hs []scheduler.JoinHandle[int]
		for i := range 20 {
			f := future.PollFn(func(cx *future.Context) (int, bool) {
				if !g.poll(cx) {
					cx.Waiting(waitTestGate, uint64(i))
					return 0, false
				}
				scheduler.SpawnValueDetached[int](e.s, cx, readyValue{})
				return i, true
			})
			if i%2 == 0 {
				hs = append(hs, scheduler.Spawn[int](e.s, nil, scheduler.Named("churn", f)))
			} else {
				hs = append(hs, scheduler.Spawn[int](e.s, nil, f))
			}
		}
		if r%2 == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		g.Open()
		for _, h := range hs {
			if _, err := wait(e, h, "churn"); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	dw.Wait()
	require.Positive(t, dumps.Load())
}

// readyValue is a future held by value that completes at once.
type readyValue struct{}

func (readyValue) Poll(*future.Context) (int, bool) { return 1, true }

// TestNoTaskIdentity: with Config.NoTaskIdentity tasks have no ids and
// record no waits, names still show, and the dump still lists the tasks.
func TestNoTaskIdentity(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1, NoTaskIdentity: true})
	g := new(latch)
	h := scheduler.Spawn[int](e.s, nil, scheduler.Named("anonymous", future.Future[int](&gateWait{g: g, n: 1})))
	require.Zero(t, h.ID())
	require.Equal(t, "anonymous", h.Name())
	eventually(t, func() bool { tasks, _ := e.s.Tasks(); return len(tasks) == 1 && tasks[0].State == scheduler.TaskIdle }, "the task listed idle")
	tasks, live := e.s.Tasks()
	require.Equal(t, int64(1), live)
	require.Zero(t, tasks[0].Wait)
	var buf bytes.Buffer
	require.NoError(t, e.s.Dump(&buf))
	require.Contains(t, buf.String(), "1 task: idle, \"anonymous\"\n")
	g.Open()
	_, err := wait(e, h, "anonymous")
	require.NoError(t, err)
}

// yieldThenGate yields left times, then waits on its gate, recording the
// wait TestGate n.
type yieldThenGate struct {
	left int
	y    scheduler.YieldFuture
	g    gateWait
}

func (f *yieldThenGate) Poll(cx *future.Context) (int, bool) {
	for f.left > 0 {
		if _, ok := f.y.Poll(cx); !ok {
			return 0, false
		}
		f.y.Reset()
		f.left--
	}
	return f.g.Poll(cx)
}

// TestTaskPollsPastSixteenBits: a task's count of polls, kept in 16 bits of
// its header and carried into its own record, is exact past 2^16 and past
// a second carry, and its wait still matches its last poll.
func TestTaskPollsPastSixteenBits(t *testing.T) {
	for _, yields := range []int{1<<16 - 2, 1<<16 - 1, 1 << 16, 2<<16 + 5} {
		t.Run(fmt.Sprint(yields), func(t *testing.T) {
			e := newEnv(t, scheduler.Config{Workers: 1})
			g := new(latch)
			h := scheduler.Spawn[int](e.s, nil, future.Future[int](&yieldThenGate{left: yields, g: gateWait{g: g, n: 7}}))
			var ti scheduler.TaskInfo
			eventually(t, func() bool {
				tasks, _ := e.s.Tasks()
				for _, x := range tasks {
					if x.ID == h.ID() && x.State == scheduler.TaskIdle && x.Wait != 0 {
						ti = x
						return true
					}
				}
				return false
			}, "the task waits on its gate")
			require.Equal(t, uint32(yields+1), ti.Polls, "a poll per yield, and the one that waits")
			require.Equal(t, "TestGate 7", ti.Wait.String())
			g.Open()
			_, err := wait(e, h, "task")
			require.NoError(t, err)
		})
	}
}
