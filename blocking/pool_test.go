package blocking_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/blitz-go/blitz/blocking"
)

// waitLimit bounds every wait of the tests: a lost task or wake-up fails
// the test instead of hanging it.
const waitLimit = 10 * time.Second

// newPool returns a pool that the test's cleanup shuts down, requiring
// every worker to exit.
func newPool(t testing.TB, cfg Config) *Pool {
	t.Helper()
	p, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_, err := p.Shutdown(ctx, RunQueued)
		assert.NoError(t, err, "cleanup: workers did not exit")
	})
	return p
}

// eventually polls cond until it holds, failing the test after waitLimit.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// statsEventually polls p.Stats until want(s) holds and returns that s.
func statsEventually(t testing.TB, p *Pool, what string, want func(Stats) bool) Stats {
	t.Helper()
	var s Stats
	eventually(t, what, func() bool {
		s = p.Stats()
		return want(s)
	})
	return s
}

// receive waits for a value on ch, failing the test after waitLimit.
func receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// blocker is a task that reports its start and blocks until released.
type blocker struct {
	Task
	started chan struct{}
	release chan struct{}
}

func newBlocker() *blocker {
	b := &blocker{started: make(chan struct{}, 1), release: make(chan struct{})}
	b.Run = func() {
		b.started <- struct{}{}
		<-b.release
	}
	return b
}

// startBlocker submits a blocker and waits until its Run is executing.
func startBlocker(t testing.TB, p *Pool) *blocker {
	t.Helper()
	b := newBlocker()
	require.NoError(t, p.Submit(&b.Task))
	receive(t, b.started, "blocker to start")
	return b
}

func TestNewRejectsNegativeConfig(t *testing.T) {
	for _, cfg := range []Config{{MaxThreads: -1}, {IdleTimeout: -time.Second}} {
		p, err := New(cfg)
		assert.ErrorIs(t, err, ErrConfig, "%+v", cfg)
		assert.Nil(t, p)
	}
	p, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, Stats{}, p.Stats(), "New starts no worker")
	_, err = p.Shutdown(context.Background(), RunQueued)
	require.NoError(t, err)
}

func TestSubmitRejectsNilTasks(t *testing.T) {
	p := newPool(t, Config{})
	assert.ErrorIs(t, p.Submit(nil), ErrNilTask)
	assert.ErrorIs(t, p.Submit(&Task{}), ErrNilTask)
	assert.ErrorIs(t, p.Go(nil), ErrNilTask)
	assert.Equal(t, Stats{}, p.Stats())
}

func TestSubmitRejectsTaskAlreadyQueued(t *testing.T) {
	p := newPool(t, Config{MaxThreads: 1})
	b := startBlocker(t, p)
	ran := make(chan struct{}, 2)
	task := &Task{Run: func() { ran <- struct{}{} }}
	require.NoError(t, p.Submit(task))
	err := p.Submit(task)
	require.ErrorIs(t, err, ErrQueued)
	assert.Contains(t, err.Error(), "blocking: ")
	assert.Equal(t, 1, p.Stats().Pending, "the second Submit queued nothing")

	close(b.release)
	receive(t, ran, "queued task")
	statsEventually(t, p, "the worker to park", func(s Stats) bool { return s.Idle == 1 })
	select {
	case <-ran:
		t.Fatal("task ran twice")
	default:
	}
	// Run has been called: the task is the submitter's again.
	require.NoError(t, p.Submit(task))
	receive(t, ran, "resubmitted task")
}

func TestTaskMayResubmitItselfFromRun(t *testing.T) {
	p := newPool(t, Config{MaxThreads: 1})
	const rounds = 100
	var task Task
	runs := 0
	done := make(chan error, 1)
	task.Run = func() {
		runs++ // the pool orders each run after the Submit of it
		if runs == rounds {
			done <- nil
			return
		}
		if err := p.Submit(&task); err != nil {
			done <- err
		}
	}
	require.NoError(t, p.Submit(&task))
	require.NoError(t, receive(t, done, "the last round"))
	s := statsEventually(t, p, "the last run to be counted", func(s Stats) bool { return s.Ran == rounds })
	assert.Equal(t, uint64(1), s.Started, "one worker ran every round")
}

func TestSubmitAfterShutdownFails(t *testing.T) {
	p := newPool(t, Config{})
	_, err := p.Shutdown(context.Background(), RunQueued)
	require.NoError(t, err)
	err = p.Submit(&Task{Run: func() { t.Error("ran after Shutdown") }})
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, p.Go(func() { t.Error("ran after Shutdown") }), ErrClosed)
	assert.Equal(t, Stats{}, p.Stats())
	// A second Shutdown is fine.
	r, err := p.Shutdown(context.Background(), RejectQueued)
	assert.NoError(t, err)
	assert.Equal(t, Report{}, r)
}

func TestThreadsNeverExceedMaxThreadsUnderBurst(t *testing.T) {
	const (
		maxThreads = 64
		tasks      = 10_000
		submitters = 8
	)
	p := newPool(t, Config{MaxThreads: maxThreads})
	gate := make(chan struct{})
	var inRun, maxInRun atomic.Int64
	var wg sync.WaitGroup
	wg.Add(tasks)
	all := make([]Task, tasks)
	for i := range all {
		all[i].Run = func() {
			defer wg.Done()
			n := inRun.Add(1)
			for m := maxInRun.Load(); n > m && !maxInRun.CompareAndSwap(m, n); m = maxInRun.Load() {
			}
			<-gate
			time.Sleep(10 * time.Microsecond) // a short blocking call
			inRun.Add(-1)
		}
	}

	// A monitor samples Stats during the whole burst.
	stop := make(chan struct{})
	monitorDone := make(chan int)
	go func() {
		maxThreadsSeen := 0
		for {
			s := p.Stats()
			maxThreadsSeen = max(maxThreadsSeen, s.Threads)
			select {
			case <-stop:
				monitorDone <- maxThreadsSeen
				return
			default:
				runtime.Gosched()
			}
		}
	}()

	var sub sync.WaitGroup
	for g := range submitters {
		sub.Go(func() {
			for i := g; i < tasks; i += submitters {
				if err := p.Submit(&all[i]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	sub.Wait()
	// Every worker is blocked on the gate: the rest is queued.
	s := statsEventually(t, p, "every worker to block", func(s Stats) bool {
		return inRun.Load() == maxThreads
	})
	assert.Equal(t, maxThreads, s.Threads)
	assert.Equal(t, tasks-maxThreads, s.Pending)
	assert.Zero(t, s.Idle)

	close(gate)
	wg.Wait()
	close(stop)
	assert.LessOrEqual(t, <-monitorDone, maxThreads)
	assert.Equal(t, int64(maxThreads), maxInRun.Load(), "tasks running at once")
	s = statsEventually(t, p, "every run to be counted", func(s Stats) bool { return s.Ran == tasks })
	assert.Equal(t, uint64(maxThreads), s.Started, "workers are reused, not restarted")
	assert.Zero(t, s.Pending)
}

func TestIdleWorkersExitAfterIdleTimeout(t *testing.T) {
	const n = 8
	p := newPool(t, Config{IdleTimeout: 20 * time.Millisecond})
	blockers := make([]*blocker, n)
	for i := range blockers {
		blockers[i] = startBlocker(t, p)
	}
	assert.Equal(t, n, p.Stats().Threads)
	for _, b := range blockers {
		close(b.release)
	}
	s := statsEventually(t, p, "the pool to shrink to zero", func(s Stats) bool { return s.Threads == 0 })
	assert.Equal(t, Stats{Started: n, Ran: n}, s)

	// The pool grows again on demand.
	b := startBlocker(t, p)
	assert.Equal(t, uint64(n+1), p.Stats().Started)
	close(b.release)
}

func TestPanicReachesPanickedAndWorkerLivesOn(t *testing.T) {
	p := newPool(t, Config{MaxThreads: 1})
	type caught struct {
		value any
		stack []byte
	}
	got := make(chan caught, 1)
	panicked := func(v any, stack []byte) { got <- caught{v, stack} }

	require.NoError(t, p.Submit(&Task{Run: func() { panic("boom") }, Panicked: panicked}))
	c := receive(t, got, "Panicked")
	assert.Equal(t, "boom", c.value)
	require.NotEmpty(t, c.stack)
	assert.Contains(t, string(c.stack), "TestPanicReachesPanickedAndWorkerLivesOn",
		"the stack is the panicking goroutine's")

	require.NoError(t, p.Submit(&Task{Run: func() { panic(nil) }, Panicked: panicked}))
	c = receive(t, got, "Panicked for panic(nil)")
	var nilErr *runtime.PanicNilError
	assert.ErrorAs(t, c.value.(error), &nilErr)

	ran := make(chan struct{})
	require.NoError(t, p.Go(func() { close(ran) }))
	receive(t, ran, "the task after the panics")
	s := statsEventually(t, p, "counters", func(s Stats) bool { return s.Ran == 3 })
	assert.Equal(t, Stats{Threads: 1, Idle: 1, Started: 1, Ran: 3, Panics: 2}, s,
		"one worker survived both panics")
}

func TestGoexitInRunKeepsQueueMoving(t *testing.T) {
	p := newPool(t, Config{MaxThreads: 1})
	started, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Go(func() {
		close(started)
		<-release
		runtime.Goexit() // as t.FailNow would
	}))
	<-started
	ran := make(chan struct{})
	require.NoError(t, p.Go(func() { close(ran) }))
	assert.Equal(t, 1, p.Stats().Pending)
	close(release)
	receive(t, ran, "the task queued behind the Goexit")
	s := statsEventually(t, p, "counters", func(s Stats) bool { return s.Ran == 2 && s.Idle == 1 })
	assert.Equal(t, Stats{Threads: 1, Idle: 1, Started: 2, Ran: 2}, s)

	// Goexit is not a panic, and with nothing queued the worker is just
	// counted out.
	require.NoError(t, p.Submit(&Task{
		Run:      func() { runtime.Goexit() },
		Panicked: func(any, []byte) { t.Error("Panicked called for Goexit") },
	}))
	s = statsEventually(t, p, "counters", func(s Stats) bool { return s.Ran == 3 })
	assert.Equal(t, Stats{Started: 2, Ran: 3}, s)
}

// queuedTasks returns n tasks that count their runs and rejects; every
// other one has a Reject.
type countedTask struct {
	Task
	runs, rejects atomic.Int32
	err           error
}

func queuedTasks(n int) []*countedTask {
	out := make([]*countedTask, n)
	for i := range out {
		c := &countedTask{}
		c.Run = func() { c.runs.Add(1) }
		if i%2 == 0 {
			c.Reject = func(err error) {
				c.err = err
				c.rejects.Add(1)
			}
		}
		out[i] = c
	}
	return out
}

func cancelledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestShutdownRunQueuedRunsEveryQueuedTask(t *testing.T) {
	p := newPool(t, Config{MaxThreads: 2})
	b1, b2 := startBlocker(t, p), startBlocker(t, p)
	queued := queuedTasks(5)
	for _, c := range queued {
		require.NoError(t, p.Submit(&c.Task))
	}
	assert.Equal(t, 5, p.Stats().Pending)

	r, err := p.Shutdown(cancelledCtx(), RunQueued)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Report{}, r)
	assert.ErrorIs(t, p.Submit(&newBlocker().Task), ErrClosed)
	assert.Equal(t, 5, p.Stats().Pending, "RunQueued keeps the queue")

	close(b1.release)
	close(b2.release)
	r, err = p.Shutdown(context.Background(), RunQueued)
	require.NoError(t, err)
	assert.Equal(t, Report{Ran: 5}, r)
	for i, c := range queued {
		assert.Equal(t, int32(1), c.runs.Load(), "task %d runs", i)
		assert.Zero(t, c.rejects.Load(), "task %d rejects", i)
	}
	assert.Equal(t, Stats{Started: 2, Ran: 7}, p.Stats())
}

func TestShutdownRejectQueuedRejectsEveryQueuedTask(t *testing.T) {
	p := newPool(t, Config{MaxThreads: 2})
	b1, b2 := startBlocker(t, p), startBlocker(t, p)
	queued := queuedTasks(5)
	for _, c := range queued {
		require.NoError(t, p.Submit(&c.Task))
	}

	r, err := p.Shutdown(cancelledCtx(), RejectQueued)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Report{Rejected: 5}, r)
	// Reject ran on this goroutine, before Shutdown returned.
	for i, c := range queued {
		if c.Reject != nil {
			assert.Equal(t, int32(1), c.rejects.Load(), "task %d rejects", i)
			assert.ErrorIs(t, c.err, ErrClosed)
		}
	}
	assert.Zero(t, p.Stats().Pending)

	close(b1.release)
	close(b2.release)
	r, err = p.Shutdown(context.Background(), RejectQueued)
	require.NoError(t, err)
	assert.Equal(t, Report{Rejected: 5}, r, "the Report counts from the first call")
	for i, c := range queued {
		assert.Zero(t, c.runs.Load(), "task %d runs", i)
	}
	assert.Equal(t, Stats{Started: 2, Ran: 2}, p.Stats())

	// A rejected task is the submitter's again.
	q := newPool(t, Config{})
	require.NoError(t, q.Submit(&queued[1].Task))
	eventually(t, "the rejected task to run on another pool", func() bool { return queued[1].runs.Load() == 1 })
}

func TestShutdownReturnsCtxCauseAndCanBeCalledAgain(t *testing.T) {
	p := newPool(t, Config{})
	b := startBlocker(t, p)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Shutdown(ctx, RunQueued)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	cause := errors.New("operator gave up")
	cctx, ccancel := context.WithCancelCause(context.Background())
	ccancel(cause)
	_, err = p.Shutdown(cctx, RunQueued)
	require.ErrorIs(t, err, cause)
	assert.Equal(t, 1, p.Stats().Threads, "the blocked worker lives on")

	// Two goroutines wait; both return once the worker exits.
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := p.Shutdown(context.Background(), RunQueued)
			errs <- err
		}()
	}
	close(b.release)
	assert.NoError(t, receive(t, errs, "first waiter"))
	assert.NoError(t, receive(t, errs, "second waiter"))
	assert.Equal(t, 0, p.Stats().Threads)
}

func TestShutdownWakesIdleWorkersAtOnce(t *testing.T) {
	p := newPool(t, Config{IdleTimeout: time.Hour})
	blockers := []*blocker{startBlocker(t, p), startBlocker(t, p), startBlocker(t, p)}
	for _, b := range blockers {
		close(b.release)
	}
	statsEventually(t, p, "three parked workers", func(s Stats) bool { return s.Idle == 3 })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	start := time.Now()
	_, err := p.Shutdown(ctx, RunQueued)
	require.NoError(t, err, "an idle worker waited for its timeout")
	assert.Less(t, time.Since(start), waitLimit)
	assert.Equal(t, Stats{Started: 3, Ran: 3}, p.Stats())
}

func TestQueuedTasksStartInSubmitOrder(t *testing.T) {
	const n = 100
	p := newPool(t, Config{MaxThreads: 1})
	b := startBlocker(t, p)
	var order []int // written by the one worker, read after Shutdown
	for i := range n {
		require.NoError(t, p.Go(func() { order = append(order, i) }))
	}
	close(b.release)
	_, err := p.Shutdown(context.Background(), RunQueued)
	require.NoError(t, err)
	require.Len(t, order, n)
	for i, v := range order {
		require.Equal(t, i, v)
	}
}

// A worker whose idle timer fired, but which has not yet taken the lock to
// leave, is still on the idle list: a Submit in that window hands the task
// to it, and it must run it rather than exit ("Idle workers", rule 1), and
// then time out as usual.
func TestTimedOutWorkerRunsTaskHandedToIt(t *testing.T) {
	p, err := New(Config{MaxThreads: 1, IdleTimeout: time.Millisecond})
	require.NoError(t, err)
	paused, resume := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	SetHook(p, func(h HookPoint) {
		if h == HookIdleTimedOut && once.CompareAndSwap(false, true) {
			close(paused)
			<-resume
		}
	})
	defer func() {
		_, err := p.Shutdown(context.Background(), RunQueued)
		assert.NoError(t, err)
	}()

	b := startBlocker(t, p)
	close(b.release)
	receive(t, paused, "the idle timer")
	assert.Equal(t, Stats{Threads: 1, Idle: 1, Started: 1, Ran: 1}, p.Stats())
	ran := make(chan struct{})
	require.NoError(t, p.Go(func() { close(ran) }))
	assert.Equal(t, Stats{Threads: 1, Started: 1, Ran: 1}, p.Stats(),
		"handed to the parked worker, not queued, no new worker")
	close(resume)
	receive(t, ran, "the handed-off task")
	s := statsEventually(t, p, "the run to be counted", func(s Stats) bool { return s.Ran == 2 })
	assert.Equal(t, uint64(1), s.Started)
	// Its timer fired for the earlier park: it still times out after this
	// one.
	statsEventually(t, p, "the worker to time out", func(s Stats) bool { return s.Threads == 0 })
}

// TestIdleExitRacesSubmit submits at about the moment a worker's idle timer
// fires, many times over: every task must run (a lost wake-up would strand
// it, queued with no worker to take it, or handed to a worker that exits).
// With one worker, a Submit that queues while the worker is leaving strands
// the task unless leaving and counting out are one step ("Idle workers",
// rule 2).
func TestIdleExitRacesSubmit(t *testing.T) {
	rounds := 1500
	if testing.Short() {
		rounds = 150
	}
	for _, c := range []struct{ maxThreads, submitters int }{{1, 1}, {2, 3}} {
		t.Run(fmt.Sprintf("MaxThreads=%d", c.maxThreads), func(t *testing.T) {
			t.Parallel()
			p := newPool(t, Config{MaxThreads: c.maxThreads, IdleTimeout: time.Millisecond})
			var wg sync.WaitGroup
			for g := range c.submitters {
				wg.Go(func() { raceIdleExit(t, p, c.maxThreads, g, rounds) })
			}
			wg.Wait()
			s := p.Stats()
			assert.Equal(t, uint64(c.submitters*rounds), s.Ran)
			assert.Greater(t, s.Started, uint64(c.maxThreads), "workers timed out and were restarted")
		})
	}
}

// raceIdleExit is one submitter of TestIdleExitRacesSubmit.
func raceIdleExit(t *testing.T, p *Pool, maxThreads, g, rounds int) {
	done := make(chan struct{}, 1)
	task := &Task{Run: func() { done <- struct{}{} }}
	for i := range rounds {
		if err := p.Submit(task); err != nil {
			t.Error(err)
			return
		}
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Errorf("submitter %d round %d: task lost: %+v", g, i, p.Stats())
			return
		}
		if s := p.Stats(); s.Threads > maxThreads {
			t.Errorf("%d threads", s.Threads)
		}
		// Land the next Submit around the moment the worker times out: 1ms
		// after it parked, plus the timer's latency (up to a millisecond or
		// two when the process is otherwise idle).
		time.Sleep(time.Duration(500+(i*53+g*101)%2500) * time.Microsecond)
	}
}

func TestSubmitOfPreallocatedTaskAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("instrumentation allocates")
	}
	t.Run("idle worker", func(t *testing.T) {
		p := newPool(t, Config{IdleTimeout: time.Hour})
		done := make(chan struct{}, 1)
		task := &Task{Run: func() { done <- struct{}{} }}
		allocs := testing.AllocsPerRun(100, func() {
			for p.Stats().Idle == 0 && p.Stats().Started != 0 {
				runtime.Gosched()
			}
			if err := p.Submit(task); err != nil {
				panic(err)
			}
			<-done
		})
		assert.Zero(t, allocs)
		assert.Equal(t, uint64(1), p.Stats().Started, "every Submit after the first found the idle worker")
	})
	t.Run("queue", func(t *testing.T) {
		p := newPool(t, Config{MaxThreads: 1})
		b := startBlocker(t, p)
		tasks := make([]Task, 200)
		for i := range tasks {
			tasks[i].Run = func() {}
		}
		i := 0
		allocs := testing.AllocsPerRun(100, func() {
			if err := p.Submit(&tasks[i]); err != nil {
				panic(err)
			}
			i++
		})
		assert.Zero(t, allocs)
		assert.Equal(t, i, p.Stats().Pending)
		close(b.release)
	})
}

func TestErrorsCarryPackagePrefix(t *testing.T) {
	_, err := New(Config{MaxThreads: -3})
	assert.Equal(t, "blocking: invalid config: MaxThreads -3 is negative", err.Error())
	p := newPool(t, Config{})
	for _, err := range []error{p.Submit(nil), p.Go(nil)} {
		assert.True(t, strings.HasPrefix(err.Error(), "blocking: nil task"), err.Error())
	}
}

func TestShutdownPanicsOnUnknownPolicy(t *testing.T) {
	p := newPool(t, Config{})
	assert.PanicsWithValue(t, "blocking: Shutdown with unknown policy 7", func() {
		_, _ = p.Shutdown(context.Background(), Policy(7))
	})
	assert.NoError(t, p.Go(func() {}), "the pool is still open")
}
