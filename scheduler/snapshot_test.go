package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// blockAfterOnePending spawns, from outside, a task named name that returns
// pending once (so that it is linked and listed) and then blocks its
// worker in its second poll until release is closed; it returns once the
// task blocks.
func blockAfterOnePending(e *env, name string, release chan struct{}) scheduler.JoinHandle[int] {
	var polled atomic.Bool
	blocking := make(chan struct{})
	h := scheduler.Spawn[int](e.s, nil, scheduler.Named(name, future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
		if !polled.Swap(true) {
			cx.Waker().Wake()
			return 0, false
		}
		close(blocking)
		e.block(release, name)
		return 0, true
	}))))
	recv(e.t, blocking, name+" blocking")
	return h
}

// countStates counts tasks by state.
func countStates(tasks []scheduler.TaskInfo) map[scheduler.TaskState]int {
	n := map[scheduler.TaskState]int{}
	for _, ti := range tasks {
		n[ti.State]++
	}
	return n
}

// TestTasksListsTheTasksQueuedBehindALongPoll: on a runtime whose one
// worker is blocked in a long poll, the tasks spawned behind it wait in the
// queue for their first poll; Tasks lists every one of them as queued, with
// its id and name, so that the listed tasks add up to Stats().Live, and
// Dump and DumpEach show them.
func TestTasksListsTheTasksQueuedBehindALongPoll(t *testing.T) {
	const n = 50
	e := newEnv(t, scheduler.Config{Workers: 1})
	release := make(chan struct{})
	blocker := blockAfterOnePending(e, "blocker", release)
	ids := map[uint64]bool{}
	var hs []scheduler.JoinHandle[int]
	for i := range n {
		h := scheduler.Spawn[int](e.s, nil, scheduler.Named(fmt.Sprintf("behind-%d", i), future.Future[int](future.Ready(i))))
		ids[h.ID()] = true
		hs = append(hs, h)
	}

	tasks, live := e.s.Tasks()
	require.EqualValues(t, n+1, live)
	require.Len(t, tasks, n+1, "every live task listed")
	require.Equal(t, e.s.Stats().Live, live)
	require.Equal(t, map[scheduler.TaskState]int{scheduler.TaskQueued: n, scheduler.TaskRunning: 1}, countStates(tasks))
	for _, ti := range tasks {
		if ti.State != scheduler.TaskQueued {
			require.Equal(t, blocker.ID(), ti.ID)
			continue
		}
		require.True(t, ids[ti.ID], "task %d: not one spawned behind the blocker", ti.ID)
		delete(ids, ti.ID)
		require.True(t, strings.HasPrefix(ti.Name, "behind-"), ti.Name)
		require.Zero(t, ti.Polls)
		require.Zero(t, ti.Parent)
		require.Zero(t, ti.Age, "spawned from outside: its age is known from its first poll")
	}
	require.Empty(t, ids, "tasks not listed")

	var b bytes.Buffer
	require.NoError(t, e.s.Dump(&b))
	out := b.String()
	require.Contains(t, out, fmt.Sprintf("blitz tasks: %d live, %d listed\n", n+1, n+1))
	require.Contains(t, out, "1 task: queued, \"behind-7\"\n")
	b.Reset()
	require.NoError(t, e.s.DumpEach(&b))
	each := b.String()
	require.Equal(t, n, strings.Count(each, ": queued since its spawn\n"))
	require.Contains(t, each, fmt.Sprintf("task %d \"behind-0\": queued since its spawn\n\tage 0s, polls 0\n", hs[0].ID()))

	close(release)
	for i, h := range hs {
		v, err := wait(e, h, "queued task")
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	_, err := wait(e, blocker, "blocker")
	require.NoError(t, err)
}

// TestTasksListsTheTasksQueuedOnABlockedWorker: a task that spawns
// children and then blocks its worker in its first poll leaves them in
// that worker's LIFO and local queue, which the worker cannot copy while
// it blocks: the snapshot takes the local queue's as a thief would (to
// the global queue), reads the LIFO's from what the worker publishes of
// them, and lists them all as queued, with their parent and age, and the
// blocked task as running its first poll, read from what its worker
// publishes (without Config.PollTiming), in every snapshot and every LIFO
// mode.
func TestTasksListsTheTasksQueuedOnABlockedWorker(t *testing.T) {
	for _, lifo := range []int{scheduler.LIFOSlot, scheduler.LIFOStack, scheduler.LIFOOff} {
		t.Run(fmt.Sprintf("lifo=%d", lifo), func(t *testing.T) {
			const n = 300 // more than a LIFO and a local queue hold
			e := newEnv(t, scheduler.Config{Workers: 1, LIFO: lifo})
			release := make(chan struct{})
			var children []scheduler.JoinHandle[int]
			parent := blockAfterSpawning(e, n, &children, release)
			eventually(t, func() bool { return len(e.s.LongPolls(false)) == 1 }, "a long tick")
			ids := map[uint64]bool{}
			for _, h := range children {
				ids[h.ID()] = true
			}

			for range 3 { // the first takes the local queue; the others find it moved
				tasks, live := e.s.Tasks()
				require.EqualValues(t, n+1, live)
				require.Len(t, tasks, n+1, "every live task listed")
				require.Equal(t, map[scheduler.TaskState]int{scheduler.TaskQueued: n, scheduler.TaskRunning: 1}, countStates(tasks))
				for _, ti := range tasks {
					if ti.State == scheduler.TaskRunning {
						require.Equal(t, parent.ID(), ti.ID)
						require.True(t, ti.FirstPoll)
						require.EqualValues(t, 1, ti.Polls)
						require.Positive(t, ti.SinceLastPoll)
						continue
					}
					require.True(t, ids[ti.ID], "task %d: not a child", ti.ID)
					require.Zero(t, ti.Polls)
					require.Equal(t, parent.ID(), ti.Parent)
					requireAgeKnown(t, ti.Age)
					require.Equal(t, ti.Age, ti.SinceLastPoll)
				}
				var b bytes.Buffer
				require.NoError(t, e.s.Dump(&b))
				require.Contains(t, b.String(), fmt.Sprintf("blitz tasks: %d live, %d listed\n", n+1, n+1))
			}
			close(release)
			for _, h := range append(children, parent) {
				_, err := wait(e, h, "task")
				require.NoError(t, err)
			}
		})
	}
}

// requireAgeKnown checks the age of a task spawned on a worker: known, so
// positive, except where the clock is too coarse to see the time since
// its spawn (Windows', and Wine's, readings may not move for
// milliseconds), where it is not negative.
func requireAgeKnown(t *testing.T, age time.Duration) {
	t.Helper()
	if runtime.GOOS == "windows" {
		require.GreaterOrEqual(t, age, time.Duration(0))
		return
	}
	require.Positive(t, age, "spawned on a worker: its age is known")
}

// blockAfterSpawning spawns a task that spawns n children (their handles in
// *children) and then blocks in its first poll until release is closed.
func blockAfterSpawning(e *env, n int, children *[]scheduler.JoinHandle[int], release chan struct{}) scheduler.JoinHandle[int] {
	spawned := make(chan struct{})
	h := scheduler.Spawn[int](e.s, nil, future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
		for i := range n {
			*children = append(*children, scheduler.Spawn[int](e.s, cx, future.Future[int](future.Ready(i))))
		}
		close(spawned)
		e.block(release, "spawner")
		return 0, true
	})))
	recv(e.t, spawned, "children spawned")
	return h
}

// TestTasksListsTheTasksQueuedOnABusyWorker: a worker busy with short polls
// copies its queues between two polls when asked: the children a task
// spawned into its worker's LIFO and local queue are listed as queued
// while they wait their turn. (A snapshot waits 20 ms for the worker's
// answer, which a loaded machine may delay: the test asks until one
// lists them.)
func TestTasksListsTheTasksQueuedOnABusyWorker(t *testing.T) {
	const n = 100
	// Two workers, one of them held by a blocker, so that no thief takes
	// the children from the other's local queue.
	e := newEnv(t, scheduler.Config{Workers: 2})
	release := make(chan struct{})
	blocker := blockAfterOnePending(e, "blocker", release)
	spawned := make(chan struct{})
	var children []scheduler.JoinHandle[int]
	parent := scheduler.Spawn[int](e.s, nil, future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
		for i := range n {
			children = append(children, scheduler.Spawn[int](e.s, cx, future.Future[int](future.PollFn(func(*future.Context) (int, bool) {
				time.Sleep(5 * time.Millisecond) // a short poll: the worker answers between two
				return i, true
			}))))
		}
		close(spawned)
		return 0, true
	})))
	recv(t, spawned, "children spawned")
	most := 0
	for range 10 {
		tasks, _ := e.s.Tasks()
		queued := 0
		for _, ti := range tasks {
			if ti.State == scheduler.TaskQueued {
				require.Equal(t, parent.ID(), ti.Parent)
				require.Zero(t, ti.Polls)
				requireAgeKnown(t, ti.Age)
				queued++
			}
		}
		most = max(most, queued)
		if most > n/2 {
			break
		}
	}
	require.Greater(t, most, n/2, "most children listed while they wait")
	close(release)
	for _, h := range append(children, parent, blocker) {
		_, err := wait(e, h, "task")
		require.NoError(t, err)
	}
}

// TestTasksFromATask: a snapshot taken by a task does not wait for its own
// worker, which cannot answer before the task's poll returns, and lists
// the task, in its first poll, from what its worker publishes of it
// (without Config.PollTiming).
func TestTasksFromATask(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	h := scheduler.Spawn[time.Duration](e.s, nil, scheduler.Named("taker", future.Future[time.Duration](future.PollFn(func(*future.Context) (time.Duration, bool) {
		start := time.Now()
		tasks, live := e.s.Tasks()
		if live != 1 || len(tasks) != 1 {
			e.failf("live = %d, %d listed, want 1 and 1", live, len(tasks))
		} else if ti := tasks[0]; ti.State != scheduler.TaskRunning || !ti.FirstPoll || ti.Name != "taker" {
			e.failf("listed %+v, want the taker running its first poll", ti)
		}
		return time.Since(start), true
	}))))
	took, err := wait(e, h, "snapshot taker")
	require.NoError(t, err)
	t.Logf("a snapshot from a task took %v", took)
}

// TestSnapshotAgreesWithTasks: a TaskSnapshot lists what Tasks lists, and
// finds the same warnings and deadlocks.
func TestSnapshotAgreesWithTasks(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2, SpawnSites: true})
	g := new(latch)
	var hs []scheduler.JoinHandle[int]
	for i := range 20 {
		hs = append(hs, scheduler.Spawn[int](e.s, nil, scheduler.Named(fmt.Sprintf("t%d", i), future.Future[int](&gateWait{g: g, n: uint64(i)}))))
	}
	forgetful := scheduler.Spawn[int](e.s, nil, scheduler.Named("forgetful", future.Future[int](future.PollFn(func(*future.Context) (int, bool) {
		return 0, false // takes no waker
	}))))
	eventually(t, func() bool {
		tasks, _ := e.s.Tasks()
		return len(tasks) == 21 && countStates(tasks)[scheduler.TaskIdle] == 21
	}, "21 idle tasks")
	tasks, live := e.s.Tasks()
	var snap scheduler.TaskSnapshot
	for range 2 { // and again into the same memory
		e.s.SnapshotTasks(&snap)
		require.Equal(t, live, snap.Live())
		require.Equal(t, len(tasks), snap.Len())
		byID := map[uint64]scheduler.TaskInfo{}
		for i := range snap.Len() {
			ti := snap.Task(i)
			byID[ti.ID] = ti
		}
		for _, want := range tasks {
			got, ok := byID[want.ID]
			require.True(t, ok, "task %d", want.ID)
			require.NotEmpty(t, got.Site)
			got.Age, got.SinceLastPoll, want.Age, want.SinceLastPoll = 0, 0, 0, 0
			require.Equal(t, want, got)
		}
		ws := snap.Warnings()
		require.Len(t, ws, 1)
		require.Equal(t, scheduler.LostWaker, ws[0].Kind)
		require.Equal(t, forgetful.ID(), ws[0].Task.ID)
		require.NotEmpty(t, ws[0].Task.Site)
		require.Len(t, e.s.Warnings(tasks), 1)
		require.Empty(t, snap.Deadlocks())
	}
	forgetful.Cancel()
	g.Open()
	for _, h := range hs {
		_, err := wait(e, h, "gate waiter")
		require.NoError(t, err)
	}
}

// TestSnapshotReusesItsMemory: a snapshot filled again allocates nothing
// per task.
func TestSnapshotReusesItsMemory(t *testing.T) {
	const n = 2000
	e := newEnv(t, scheduler.Config{Workers: 2})
	g := new(latch)
	var hs []scheduler.JoinHandle[int]
	for i := range n {
		hs = append(hs, scheduler.Spawn[int](e.s, nil, future.Future[int](&gateWait{g: g, n: uint64(i)})))
	}
	var snap scheduler.TaskSnapshot
	eventually(t, func() bool { e.s.SnapshotTasks(&snap); return snap.Len() == n }, "the tasks listed")
	allocs := testing.AllocsPerRun(20, func() { e.s.SnapshotTasks(&snap) })
	require.Less(t, allocs, 20.0, "allocations per fill, at %d tasks", n)
	g.Open()
	for _, h := range hs {
		_, err := wait(e, h, "gate waiter")
		require.NoError(t, err)
	}
}

// TestSnapshotsDuringShutdownStrandNoTask: snapshots that take the global
// queue's tasks out of it and put them back, taken while tasks are spawned
// and the scheduler shuts down, leave no task behind: every handle
// resolves.
func TestSnapshotsDuringShutdownStrandNoTask(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for range rounds {
		s, err := scheduler.New(scheduler.Config{Workers: 1})
		require.NoError(t, err)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					s.Tasks()
				}
			}
		}()
		var hs []scheduler.JoinHandle[int]
		for i := range 500 {
			hs = append(hs, scheduler.Spawn[int](s, nil, future.Future[int](future.Ready(i))))
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		require.NoError(t, s.Shutdown(ctx))
		cancel()
		close(stop)
		wg.Wait()
		for _, h := range hs {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			_, err := h.Wait(ctx)
			cancel()
			if err != nil {
				require.ErrorIs(t, err, scheduler.ErrShutdown)
			}
			require.False(t, errors.Is(err, context.DeadlineExceeded), "a task stranded")
		}
	}
}

// TestSnapshotsOfBlockedWorkersUnderChurn: snapshots taken, from outside
// and from tasks, while tasks spawn children and some block their worker
// in their first poll for longer than a snapshot waits (so that the
// snapshots take those workers' local queues and read what they publish
// of their first poll and their LIFO, while they resume) list no task
// twice and no polled task as queued, and strand none: every handle
// resolves. With the LIFO slot and the stack.
func TestSnapshotsOfBlockedWorkersUnderChurn(t *testing.T) {
	for _, m := range lifoModes {
		t.Run(m.name, func(t *testing.T) { testSnapshotsOfBlockedWorkersUnderChurn(t, m.lifo) })
	}
}

func testSnapshotsOfBlockedWorkersUnderChurn(t *testing.T, lifo int) {
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	e := newEnv(t, scheduler.Config{Workers: 2, LIFO: lifo})
	check := func(tasks []scheduler.TaskInfo) {
		seen := make(map[uint64]bool, len(tasks))
		for _, ti := range tasks {
			if seen[ti.ID] {
				e.failf("task %d listed twice", ti.ID)
			}
			seen[ti.ID] = true
			if ti.State == scheduler.TaskQueued && ti.Polls != 0 {
				e.failf("task %d listed as queued after %d polls", ti.ID, ti.Polls)
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				tasks, _ := e.s.Tasks()
				check(tasks)
			}
		}
	}()
	var hs []scheduler.JoinHandle[int]
	var mu sync.Mutex
	for r := range rounds {
		h := scheduler.Spawn[int](e.s, nil, future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
			var kids []scheduler.JoinHandle[int]
			for i := range 20 {
				kids = append(kids, scheduler.Spawn[int](e.s, cx, future.Future[int](future.PollFn(func(*future.Context) (int, bool) {
					if i%7 == 0 {
						tasks, _ := e.s.Tasks()
						check(tasks)
					}
					return i, true
				}))))
			}
			mu.Lock()
			hs = append(hs, kids...)
			mu.Unlock()
			if r%3 == 0 {
				time.Sleep(30 * time.Millisecond) // past a snapshot's wait, in the first poll
			}
			return r, true
		})))
		mu.Lock()
		hs = append(hs, h)
		mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	for i := 0; ; i++ {
		mu.Lock()
		if i == len(hs) {
			mu.Unlock()
			break
		}
		h := hs[i]
		mu.Unlock()
		_, err := wait(e, h, "task")
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	tasks, live := e.s.Tasks()
	require.Zero(t, live)
	require.Empty(t, tasks)
}

// TestFirstPollStampKeptAtTheLink: a task idle after its first poll shows
// the time since that poll, which its link into the owned list stored (a
// first poll's stamp is not stored at the poll's start), not the time
// since the scheduler started.
func TestFirstPollStampKeptAtTheLink(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	time.Sleep(60 * time.Millisecond) // the scheduler's clock runs ahead of the task's
	g := new(latch)
	h := scheduler.Spawn[int](e.s, nil, future.Future[int](&gateWait{g: g, n: 1}))
	var ti scheduler.TaskInfo
	eventually(t, func() bool {
		tasks, _ := e.s.Tasks()
		if len(tasks) != 1 || tasks[0].State != scheduler.TaskIdle {
			return false
		}
		ti = tasks[0]
		return true
	}, "the task idle")
	// The poll began at or after the spawn, on a clock read in
	// milliseconds.
	require.LessOrEqual(t, ti.SinceLastPoll, ti.Age+time.Millisecond, "%+v", ti)
	require.EqualValues(t, 1, ti.Polls)
	g.Open()
	_, err := wait(e, h, "gate waiter")
	require.NoError(t, err)
}
