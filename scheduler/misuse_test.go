package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// logCapture redirects the standard logger into a buffer for the rest of
// the test. Tests that use it must not run in parallel with others.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// String returns what was logged so far.
func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func captureLog(t *testing.T) *logCapture {
	c := &logCapture{}
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(c)
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags) })
	return c
}

// TestNilFutureSentinelsAreOne: the scheduler's ErrNilFuture is the future
// package's, so errors.Is matches either whichever package reported it.
func TestNilFutureSentinelsAreOne(t *testing.T) {
	require.ErrorIs(t, scheduler.ErrNilFuture, future.ErrNilFuture)
	require.ErrorIs(t, future.ErrNilFuture, scheduler.ErrNilFuture)
}

// TestSpawnNilFutureResolvesHandle: Spawn of a nil future does not panic;
// its handle is already resolved with ErrNilFuture, and nothing runs or
// stays live.
func TestSpawnNilFutureResolvesHandle(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	var h scheduler.JoinHandle[int]
	require.NotPanics(t, func() { h = scheduler.Spawn[int](e.s, nil, nil) })
	require.True(t, h.IsFinished())
	_, err := wait(e, h, "nil spawn")
	require.ErrorIs(t, err, scheduler.ErrNilFuture)
	require.ErrorIs(t, err, future.ErrNilFuture)

	// From inside a task too: the handle a poll gets is resolved.
	r, err := wait(e, scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
		return scheduler.Spawn[int](e.s, cx, nil).Poll(cx)
	})), "nil spawn from a task")
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, future.ErrNilFuture)

	_, err = scheduler.TrySpawn[int](e.s, nil, nil)
	require.ErrorIs(t, err, future.ErrNilFuture)
	require.Zero(t, e.s.Stats().Live)
	require.Zero(t, e.s.Stats().Panicked)
}

// TestBlockingInTaskRefused calls JoinHandle.Wait from inside a task, on a
// handle that is not finished: on one worker that would block the only
// worker forever (the awaited task can never run), on several it would
// stall a worker. Wait refuses at once with ErrBlockingInTask, and the
// awaited task is left running.
func TestBlockingInTaskRefused(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(map[int]string{1: "one worker", 4: "four workers"}[workers], func(t *testing.T) {
			e := newEnv(t, scheduler.Config{Workers: workers})
			g := &gate{}
			inner := scheduler.Spawn(e.s, nil, future.Future[int](gateProbe(e, "inner", g, 5)))
			type out struct {
				err     error
				elapsed time.Duration
			}
			outer := scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) (out, bool) {
				// The watchdog bounds the wait on the unfixed code, so
				// that the test reports instead of hanging.
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				start := time.Now()
				_, err := inner.Wait(ctx)
				return out{err, time.Since(start)}, true
			}))
			o, err := wait(e, outer, "outer")
			require.NoError(t, err)
			require.ErrorIs(t, o.err, scheduler.ErrBlockingInTask)
			require.Less(t, o.elapsed, time.Second, "refused at once")
			require.False(t, inner.IsFinished())
			g.Open()
			v, err := wait(e, inner, "inner after the refusal")
			require.NoError(t, err)
			require.Equal(t, 5, v)
		})
	}
}

// TestWaitOnFinishedHandleInTask: a Wait that would not block (the task
// already finished) is no misuse, and returns the outcome.
func TestWaitOnFinishedHandleInTask(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	inner := scheduler.Spawn(e.s, nil, future.Ready(3))
	_, err := wait(e, inner, "inner")
	require.NoError(t, err)
	v, err := wait(e, scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) (future.Result[int], bool) {
		v, err := inner.Wait(context.Background())
		return future.Result[int]{Value: v, Err: err}, true
	})), "outer")
	require.NoError(t, err)
	require.Equal(t, future.Ok(3), v)
}

// TestOnWorker: the calling goroutine is a worker inside a poll and a
// Driver call, and not in a test goroutine or one a task started.
func TestOnWorker(t *testing.T) {
	require.False(t, scheduler.OnWorker())
	drv := &onWorkerDriver{}
	e := newEnv(t, scheduler.Config{Workers: 2, Driver: drv})
	got, err := wait(e, scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) ([2]bool, bool) {
		ch := make(chan bool)
		go func() { ch <- scheduler.OnWorker() }()
		return [2]bool{scheduler.OnWorker(), <-ch}, true
	})), "probe")
	require.NoError(t, err)
	require.Equal(t, [2]bool{true, false}, got)
	eventually(t, func() bool { drv.mu.Lock(); defer drv.mu.Unlock(); return drv.calls > 0 }, "driver called")
	drv.mu.Lock()
	defer drv.mu.Unlock()
	require.Zero(t, drv.offWorker, "Maintain ran off a worker goroutine")
}

// onWorkerDriver records whether each Maintain call ran on a worker.
type onWorkerDriver struct {
	mu               sync.Mutex
	calls, offWorker int
}

func (d *onWorkerDriver) Maintain(*future.Context) time.Duration {
	on := scheduler.OnWorker()
	d.mu.Lock()
	d.calls++
	if !on {
		d.offWorker++
	}
	d.mu.Unlock()
	return -1
}

// TestDetachedPanicLoggedWithoutOnPanic: with no Config.OnPanic, the panic
// of a detached task is written to the standard logger with its stack, as
// an unrecovered panic would be printed, and counted.
func TestDetachedPanicLoggedWithoutOnPanic(t *testing.T) {
	logs := captureLog(t)
	e := newEnv(t, scheduler.Config{Workers: 1})

	// Detached before it panics: the task reports it when it finishes.
	g := &gate{}
	h := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		if g.poll(cx) {
			panickyPoll("detached boom")
		}
		return 0, false
	}))
	eventually(t, g.registered, "task polled")
	h.Detach()
	g.Open()
	eventually(t, func() bool { return strings.Contains(logs.String(), "detached boom") }, "the panic logged; log: %q", logs.String())
	require.Contains(t, logs.String(), "panickyPoll", "the stack is logged")

	// Detached after it panicked: Detach reports it.
	h2 := scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) (int, bool) {
		panickyPoll("finished boom")
		return 0, true
	}))
	eventually(t, h2.IsFinished, "second task finished")
	require.NotContains(t, logs.String(), "finished boom", "a handle still holds it")
	h2.Detach()
	require.Contains(t, logs.String(), "finished boom")
	require.Equal(t, uint64(2), e.s.Stats().Panicked)
}

// TestCancelPanicReported: a panic in a future's Cancel, called by the
// scheduler when it aborts the task, is counted and reaches the handle
// beside the abort's error (errors.Is matches both); with a detached handle
// it goes to Config.OnPanic; after a panicking poll it is reported on its
// own.
func TestCancelPanicReported(t *testing.T) {
	onPanic := make(chan *scheduler.PanicError, 8)
	e := newEnv(t, scheduler.Config{Workers: 1, OnPanic: func(pe *scheduler.PanicError) { onPanic <- pe }})

	cp := &cancelPanics{probe: pendingProbe(e, "cancel panics")}
	h := scheduler.Spawn(e.s, nil, future.Future[int](cp))
	eventually(t, func() bool { return cp.polls.Load() == 1 }, "first poll")
	h.Cancel()
	_, err := wait(e, h, "cancel panics")
	require.ErrorIs(t, err, scheduler.ErrCancelled)
	require.ErrorIs(t, err, scheduler.ErrPanicked)
	var pe *scheduler.PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "cancel panics", pe.Value)
	require.Contains(t, string(pe.Stack), "cancelPanics")
	require.Empty(t, onPanic, "the handle holds the panic")

	// Detached: nobody holds the outcome, so OnPanic gets it.
	cp2 := &cancelPanics{probe: pendingProbe(e, "detached cancel panics")}
	h2 := scheduler.Spawn(e.s, nil, future.Future[int](cp2))
	eventually(t, func() bool { return cp2.polls.Load() == 1 }, "first poll")
	h2.Cancel()
	h2.Detach()
	pe = recv(t, onPanic, "OnPanic of a detached task's Cancel")
	require.Equal(t, "cancel panics", pe.Value)

	// After a panicking poll: the handle reports the poll's panic, and
	// the Cancel's goes to OnPanic.
	cp3 := &cancelPanics{probe: pendingProbe(e, "poll and cancel panic"), pollPanics: true}
	_, err = wait(e, scheduler.Spawn(e.s, nil, future.Future[int](cp3)), "poll and cancel panic")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "poll", pe.Value)
	pe = recv(t, onPanic, "OnPanic of the Cancel after a panicking poll")
	require.Equal(t, "cancel panics", pe.Value)

	st := e.s.Stats()
	require.Equal(t, uint64(4), st.Panicked, "three Cancel panics and one poll panic")
	require.Equal(t, uint64(2), st.Cancelled)
}

// TestCancelPanicAtShutdownLogged: the shutdown's abort of a task whose
// Cancel panics is reported too (to the log without OnPanic) and the
// handle's error matches ErrShutdown and ErrPanicked.
func TestCancelPanicAtShutdownLogged(t *testing.T) {
	logs := captureLog(t)
	e := newEnv(t, scheduler.Config{Workers: 1})
	cp := &cancelPanics{probe: pendingProbe(e, "cancel panics at shutdown")}
	h := scheduler.Spawn(e.s, nil, future.Future[int](cp))
	eventually(t, func() bool { return cp.polls.Load() == 1 }, "first poll")
	cpd := &cancelPanics{probe: pendingProbe(e, "detached, cancel panics at shutdown")}
	hd := scheduler.Spawn(e.s, nil, future.Future[int](cpd))
	eventually(t, func() bool { return cpd.polls.Load() == 1 }, "first poll")
	hd.Detach()
	e.shutdown()
	_, err := wait(e, h, "cancel panics at shutdown")
	require.ErrorIs(t, err, scheduler.ErrShutdown)
	require.ErrorIs(t, err, scheduler.ErrPanicked)
	require.Contains(t, logs.String(), "cancel panics", "the detached task's Cancel panic is logged")
	require.Equal(t, 1, strings.Count(logs.String(), "cancel panics\n"), "only the detached one is logged: %q", logs.String())
	require.Equal(t, uint64(2), e.s.Stats().Panicked)
}

// TestReportPanic: a driver's contained panic is counted and goes to
// OnPanic, or to the log without one.
func TestReportPanic(t *testing.T) {
	onPanic := make(chan *scheduler.PanicError, 1)
	e := newEnv(t, scheduler.Config{Workers: 1, OnPanic: func(pe *scheduler.PanicError) { onPanic <- pe }})
	pe := &scheduler.PanicError{Value: "driver boom", Stack: []byte("the stack")}
	e.s.ReportPanic("a waker called by a test", pe)
	require.Same(t, pe, recv(t, onPanic, "OnPanic"))
	require.Equal(t, uint64(1), e.s.Stats().Panicked)

	logs := captureLog(t)
	e2 := newEnv(t, scheduler.Config{Workers: 1})
	e2.s.ReportPanic("a waker called by a test", &scheduler.PanicError{Value: errors.New("driver boom"), Stack: []byte("the stack")})
	require.Contains(t, logs.String(), "a waker called by a test")
	require.Contains(t, logs.String(), "driver boom")
	require.Contains(t, logs.String(), "the stack")
	require.Equal(t, uint64(1), e2.s.Stats().Panicked)
}

// TestShutdownInTaskRefused: Shutdown called from a task starts the
// shutdown and returns ErrBlockingInTask at once instead of waiting for its
// own worker to exit (which it never would); a goroutine's Shutdown then
// waits for the end.
func TestShutdownInTaskRefused(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	type out struct {
		err     error
		elapsed time.Duration
	}
	h := scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) (out, bool) {
		// The timeout bounds the call on the unfixed code.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		err := e.s.Shutdown(ctx)
		return out{err, time.Since(start)}, true
	}))
	o, err := wait(e, h, "task calling Shutdown")
	require.NoError(t, err)
	require.ErrorIs(t, o.err, scheduler.ErrBlockingInTask)
	require.Less(t, o.elapsed, time.Second, "refused at once")
	e.shutdown()
	_, err = wait(e, scheduler.Spawn(e.s, nil, future.Ready(1)), "spawn after the shutdown")
	require.ErrorIs(t, err, scheduler.ErrShutdown)
}

// TestOnWorkerDeepInAPoll: OnWorker finds the worker's outermost frame
// past a stack deeper than its first look (64 frames), and the answer of
// its fast path (the return address the first worker noted) agrees with
// the function lookup it replaces.
func TestOnWorkerDeepInAPoll(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	var deep func(n int) (bool, bool)
	deep = func(n int) (bool, bool) {
		if n == 0 {
			return scheduler.OnWorker(), scheduler.OnWorkerByLookup()
		}
		return deep(n - 1)
	}
	for _, depth := range []int{0, 10, 60, 200} {
		got, err := wait(e, scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) ([2]bool, bool) {
			fast, slow := deep(depth)
			return [2]bool{fast, slow}, true
		})), "probe")
		require.NoError(t, err)
		require.Equal(t, [2]bool{true, true}, got, "depth %d", depth)
	}
	require.False(t, scheduler.OnWorker())
	require.False(t, scheduler.OnWorkerByLookup())
}
