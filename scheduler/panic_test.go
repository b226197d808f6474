package scheduler_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// panickyPoll panics with v; its name must show in the PanicError's stack.
//
//go:noinline
func panickyPoll(v any) {
	panic(v)
}

// cancelPanics is a future whose Cancel panics (after counting), and whose
// Poll panics too if poll says so.
type cancelPanics struct {
	*probe
	pollPanics bool
}

func (c *cancelPanics) Poll(cx *future.Context) (int, bool) {
	v, ok := c.probe.Poll(cx)
	if c.pollPanics {
		panickyPoll("poll")
	}
	return v, ok
}

func (c *cancelPanics) Cancel() {
	c.probe.Cancel()
	panic("cancel panics")
}

// TestPanicIsolation makes tasks panic with a value, an error and nil on the
// only worker: each handle resolves with a *PanicError carrying the value
// and the panicking goroutine's stack, the panicked future is cancelled, and
// the worker goes on running the other tasks.
func TestPanicIsolation(t *testing.T) {
	onPanic := make(chan *scheduler.PanicError, 4)
	e := newEnv(t, scheduler.Config{Workers: 1, OnPanic: func(pe *scheduler.PanicError) { onPanic <- pe }})
	errBoom := errors.New("boom")

	// A task that keeps yielding on the same worker across the panics.
	var y scheduler.YieldFuture
	yields := 0
	survivor := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		for yields < 200 {
			if _, ok := y.Poll(cx); !ok {
				return 0, false
			}
			y.Reset()
			yields++
		}
		return yields, true
	}))

	for _, tc := range []struct {
		name  string
		value any
		check func(t *testing.T, err error, pe *scheduler.PanicError)
	}{
		{"value", "a string", func(t *testing.T, err error, pe *scheduler.PanicError) {
			require.Equal(t, "a string", pe.Value)
			require.Nil(t, errors.Unwrap(err))
			require.Contains(t, err.Error(), "a string")
		}},
		{"error", fmt.Errorf("wrapped: %w", errBoom), func(t *testing.T, err error, pe *scheduler.PanicError) {
			require.ErrorIs(t, err, errBoom, "errors.Is sees through to the panicked error")
		}},
		{"nil", nil, func(t *testing.T, err error, pe *scheduler.PanicError) {
			var pn *runtime.PanicNilError
			require.ErrorAs(t, err, &pn, "panic(nil) is a *runtime.PanicNilError since Go 1.21")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(e, tc.name, func(*future.Context) (int, bool) {
				panickyPoll(tc.value)
				return 0, true
			})
			_, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[int](p)), tc.name)
			require.ErrorIs(t, err, scheduler.ErrPanicked)
			var pe *scheduler.PanicError
			require.ErrorAs(t, err, &pe)
			require.Contains(t, string(pe.Stack), "panickyPoll", "the stack is the panicking goroutine's")
			require.Equal(t, int32(1), p.cancels.Load(), "a panicked future is cancelled")
			require.False(t, p.done.Load())
			tc.check(t, err, pe)
		})
	}

	// The worker survived: new tasks run, and the yielder finished.
	for i := range 50 {
		v, err := wait(e, scheduler.Spawn(e.s, nil, future.Ready(i)), "after the panics")
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	v, err := wait(e, survivor, "survivor")
	require.NoError(t, err)
	require.Equal(t, 200, v)

	// A detached task's panic goes to Config.OnPanic.
	g := &gate{}
	det := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		if g.poll(cx) {
			panickyPoll("detached")
		}
		return 0, false
	}))
	eventually(t, g.registered, "detached task polled")
	det.Detach()
	g.Open()
	pe := recv(t, onPanic, "OnPanic")
	require.Equal(t, "detached", pe.Value)
	require.Contains(t, string(pe.Stack), "panickyPoll")
	require.Empty(t, onPanic, "OnPanic is only for detached tasks")

	// A Cancel that panics during an abort does not take the worker down
	// (what it reports is TestCancelPanicReported's).
	cp := &cancelPanics{probe: pendingProbe(e, "cancel panics")}
	h := scheduler.Spawn(e.s, nil, future.Future[int](cp))
	eventually(t, func() bool { return cp.polls.Load() == 1 }, "first poll")
	h.Cancel()
	_, err = wait(e, h, "cancel panics")
	require.ErrorIs(t, err, scheduler.ErrCancelled)
	require.Equal(t, int32(1), cp.cancels.Load())

	// Nor one during the cancel that follows a panicking poll: the poll's
	// panic is what the handle reports.
	cp2 := &cancelPanics{probe: pendingProbe(e, "poll and cancel panic"), pollPanics: true}
	_, err = wait(e, scheduler.Spawn(e.s, nil, future.Future[int](cp2)), "poll and cancel panic")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "poll", pe.Value)
	require.Equal(t, int32(1), cp2.cancels.Load())

	v, err = wait(e, scheduler.Spawn(e.s, nil, future.Ready(7)), "after the panicking cancels")
	require.NoError(t, err)
	require.Equal(t, 7, v)

	// And one during the shutdown's abort.
	cp3 := &cancelPanics{probe: pendingProbe(e, "cancel panics at shutdown")}
	h3 := scheduler.Spawn(e.s, nil, future.Future[int](cp3))
	eventually(t, func() bool { return cp3.polls.Load() == 1 }, "first poll")
	e.shutdown()
	_, err = wait(e, h3, "cancel panics at shutdown")
	require.ErrorIs(t, err, scheduler.ErrShutdown)
	require.Equal(t, int32(1), cp3.cancels.Load())

	st := e.s.Stats()
	require.Equal(t, uint64(8), st.Panicked, "three polls with a handle, the detached one, the poll-and-cancel one's two, and the three other Cancels")
	require.Equal(t, uint64(1), st.Cancelled)
}
