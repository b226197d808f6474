package blitz_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// waitIdle waits until rt lists n idle tasks that recorded a wait, failing
// the test after a watchdog.
func waitIdle(t *testing.T, rt *blitz.Runtime, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, _ := rt.Tasks()
		idle := 0
		for _, ti := range tasks {
			if ti.State == blitz.TaskIdle && ti.Wait != 0 {
				idle++
			}
		}
		if idle == n {
			return
		}
		if time.Now().After(deadline) {
			var buf bytes.Buffer
			rt.DumpEach(&buf)
			t.Fatalf("%d idle tasks with a wait, want %d; dump:\n%s", idle, n, buf.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// awaitHandle is a task that waits for another task's JoinHandle.
type awaitHandle struct{ h blitz.JoinHandle[struct{}] }

func (a *awaitHandle) Poll(cx *future.Context) (struct{}, bool) {
	_, ok := a.h.Poll(cx)
	return struct{}{}, ok
}

// TestDumpShowsWaits: the dump names what each idle task waits on (a
// sleep with its deadline, a JoinHandle with the task, a JoinSet's Next),
// groups identical tasks with their count, and names their spawn site.
func TestDumpShowsWaits(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2, SpawnSites: true})
	h := rt.Handle()
	var sleepers []blitz.JoinHandle[struct{}]
	for range 3 {
		sleepers = append(sleepers, blitz.SpawnOn(h, blitz.Named("sleeper", blitz.Sleep(time.Hour))))
	}
	deadline := time.Now().Add(2 * time.Hour)
	lone := blitz.SpawnOn(h, blitz.Named("lone sleeper", blitz.SleepUntil(deadline)))
	joiner := blitz.SpawnOn[struct{}](h, blitz.Named("joiner", future.Future[struct{}](&awaitHandle{h: lone})))
	set := new(blitz.JoinSet[int])
	// A task that takes no waker: nothing will wake it, which the dump
	// warns of (its wait is "nothing").
	set.SpawnOn(h, future.PollFn(func(*future.Context) (int, bool) { return 0, false }))
	nexter := blitz.SpawnOn[future.Result[int]](h, blitz.Named("nexter", future.Future[future.Result[int]](set.Next())))
	waitIdle(t, rt, 7)

	var buf bytes.Buffer
	require.NoError(t, rt.Dump(&buf))
	out := buf.String()
	t.Logf("Dump:\n%s", out)
	require.Contains(t, out, "blitz tasks: 7 live, 7 listed\n")
	require.Contains(t, out, "\n3 tasks: idle, waiting on Sleep, \"sleeper\"\n")
	require.Contains(t, out, fmt.Sprintf("\n1 task: idle, waiting on Sleep until %s, \"lone sleeper\"\n",
		time.UnixMilli(deadline.UnixMilli()).Format("15:04:05.000")))
	require.Contains(t, out, fmt.Sprintf("\n1 task: idle, waiting on JoinHandle task %d, \"joiner\"\n", lone.ID()))
	require.Contains(t, out, "\n1 task: idle, waiting on JoinSet.Next, \"nexter\"\n")
	require.Contains(t, out, "\nWARNING (lost waker): task ")
	require.Contains(t, out, "waiting on nothing (its last poll took no waker)")
	require.Regexp(t, regexp.MustCompile(`spawned at \S+/dump_test.go:\d+ \(github.com/blitz-go/blitz_test.TestDumpShowsWaits\)`), out)

	buf.Reset()
	require.NoError(t, rt.DumpEach(&buf))
	each := buf.String()
	for _, s := range sleepers {
		require.Contains(t, each, fmt.Sprintf("\ntask %d \"sleeper\": idle ", s.ID()))
	}
	require.Contains(t, each, fmt.Sprintf("\ntask %d \"joiner\": idle ", joiner.ID()))
	require.Contains(t, each, fmt.Sprintf("\ntask %d \"nexter\": idle ", nexter.ID()))
	for _, s := range append(sleepers, lone, joiner) {
		s.Cancel()
	}
	nexter.Cancel()
	set.CancelAll()
}

// TestTaskIdentity: ids through the handle and the Context agree, Named
// names a SpawnOn, SetTaskName names a task spawned by value, a child
// knows its parent, and TaskID is false outside a task.
func TestTaskIdentity(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	h := rt.Handle()
	ids := make(chan uint64, 2)
	var child blitz.JoinHandle[int]
	parent := blitz.SpawnOn(h, blitz.Named("parent", future.PollFn(func(cx *future.Context) (int, bool) {
		id, ok := blitz.TaskID(cx)
		if ok {
			ids <- id
		}
		child = blitz.SpawnValue[int](cx, namingTask{ids: ids})
		return 0, true
	})))
	_, err := parent.Wait(testCtx(t))
	require.NoError(t, err)
	_, err = child.Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, parent.ID(), <-ids)
	require.Equal(t, child.ID(), <-ids)
	require.Equal(t, "parent", parent.Name())
	require.Equal(t, "named itself", child.Name())
	require.NotZero(t, parent.ID())
	_, ok := blitz.TaskID(future.NewContext(noopWaker()))
	require.False(t, ok)
	require.False(t, blitz.SetTaskName(future.NewContext(noopWaker()), "x"))
}

// namingTask names itself and sends its id.
type namingTask struct{ ids chan uint64 }

func (n namingTask) Poll(cx *future.Context) (int, bool) {
	blitz.SetTaskName(cx, "named itself")
	id, _ := blitz.TaskID(cx)
	n.ids <- id
	return 0, true
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestDumpWhileTasksChurn takes dumps while tasks sleep, join each other,
// name themselves and finish on every worker: under -race, the dump's
// reads must not race with the tasks' polls, waits, spawns and finishes.
func TestDumpWhileTasksChurn(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2, SpawnSites: true, PollTiming: true, ProfileLabels: true})
	h := rt.Handle()
	rounds := 100
	if testing.Short() {
		rounds = 20
	}
	stop := make(chan struct{})
	var dumps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var buf bytes.Buffer
		for {
			select {
			case <-stop:
				return
			default:
			}
			buf.Reset()
			if err := rt.Dump(&buf); err != nil {
				t.Error(err)
			}
			rt.DumpEach(&buf)
			dumps.Add(1)
		}
	}()
	for range rounds {
		var hs []blitz.JoinHandle[struct{}]
		for i := range 10 {
			sleep := blitz.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
			hs = append(hs, blitz.SpawnOn(h, blitz.Named("churn", future.Future[struct{}](future.PollFn(func(cx *future.Context) (struct{}, bool) {
				if _, ok := sleep.Poll(cx); !ok {
					return struct{}{}, false
				}
				blitz.SetTaskName(cx, "churned")
				blitz.SpawnValueDetached[struct{}](cx, yieldOnce{})
				return struct{}{}, true
			})))))
		}
		for _, jh := range hs {
			_, err := jh.Wait(testCtx(t))
			require.NoError(t, err)
		}
	}
	close(stop)
	wg.Wait()
	require.Positive(t, dumps.Load())
}

// yieldOnce yields once, then completes.
type yieldOnce struct{ yielded bool }

func (y *yieldOnce) Poll(cx *future.Context) (struct{}, bool) {
	if !y.yielded {
		y.yielded = true
		cx.Yield()
		return struct{}{}, false
	}
	return struct{}{}, true
}

// dumpHeaders returns the first line and the stanza headers of a grouped
// dump: what stays the same from run to run.
func dumpHeaders(dump string) string {
	var b strings.Builder
	for i, line := range strings.Split(dump, "\n") {
		if i == 0 || line != "" && line[0] >= '0' && line[0] <= '9' {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// Example_dump shows the task dump of a runtime whose tasks wait: three
// sleepers grouped in one stanza, and a task waiting for another's
// JoinHandle.
func Example_dump() {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	h := rt.Handle()
	var sleepers []blitz.JoinHandle[struct{}]
	for range 3 {
		sleepers = append(sleepers, blitz.SpawnOn(h, blitz.Named("sleeper", blitz.Sleep(time.Hour))))
	}
	blitz.SpawnOn[struct{}](h, blitz.Named("joiner", future.Future[struct{}](&awaitHandle{h: sleepers[0]})))
	for { // wait until all four wait
		tasks, _ := rt.Tasks()
		n := 0
		for _, ti := range tasks {
			if ti.State == blitz.TaskIdle && ti.Wait != 0 {
				n++
			}
		}
		if n == 4 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var buf bytes.Buffer
	rt.Dump(&buf)
	// Ages and idle times vary from run to run: print the headers.
	fmt.Print(dumpHeaders(buf.String()))
	// Output:
	// blitz tasks: 4 live, 4 listed
	// 3 tasks: idle, waiting on Sleep, "sleeper"
	// 1 task: idle, waiting on JoinHandle task 1, "joiner"
}
