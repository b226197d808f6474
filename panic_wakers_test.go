package blitz_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

// TestTimerWakerPanicContained: a task polls sleeps with Wakers of its own
// (as a combinator giving each child its own Waker does), every other one
// a Waker that panics. When the timer driver fires them, each panic is
// contained and reported to OnPanic and counted, the other Wakers of the
// batch are called, and the worker goes on.
func TestTimerWakerPanicContained(t *testing.T) {
	const sleeps = 8
	reported := make(chan *blitz.PanicError, sleeps)
	rt := newRuntime(t, blitz.Config{Workers: 1, OnPanic: func(pe *blitz.PanicError) { reported <- pe }})
	pws := make([]*panicWaker, sleeps)
	sigs := make([]*waker.Signal, sleeps)
	h := blitz.SpawnOn(rt.Handle(), future.PollFn(func(cx *future.Context) (int, bool) {
		for i := range sleeps {
			var wk waker.Waker
			if i%2 == 0 {
				pws[i] = &panicWaker{}
				wk = waker.New(pws[i])
			} else {
				sigs[i] = &waker.Signal{}
				wk = waker.New(sigs[i])
			}
			child := cx.WithWaker(wk)
			if _, ok := blitz.Sleep(5 * time.Millisecond).Poll(&child); ok {
				panic("a 5 ms sleep was ready at once")
			}
		}
		return 0, true
	}))
	_, err := h.Wait(testCtx(t))
	require.NoError(t, err)
	for i := range sleeps {
		if sigs[i] != nil {
			require.True(t, woken(sigs[i]), "sleep %d's waker, beside the panicking ones, was not called", i)
			continue
		}
		pollUntil(t, fmt.Sprintf("sleep %d's panicking waker called", i), func() bool { return pws[i].wakes.Load() > 0 })
	}
	for range sleeps / 2 {
		select {
		case pe := <-reported:
			require.Contains(t, fmt.Sprint(pe.Value), "waker boom")
		case <-time.After(10 * time.Second):
			t.Fatal("a waker panic was not reported to OnPanic")
		}
	}
	require.Equal(t, uint64(sleeps/2), rt.Stats().Panicked)
	v, err := blitz.SpawnOn(rt.Handle(), future.Ready(3)).Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 3, v)
}

// TestBlockingPoolWakerPanicContained: a blocking call is polled with a
// Waker that panics. When the pool thread finishes the call and wakes it,
// the panic is reported and counted, and the call's outcome stays stored:
// a later poll takes fn's value (the pool used to take the Waker's panic
// for fn's own, so the value was lost and the next poll re-raised it).
func TestBlockingPoolWakerPanicContained(t *testing.T) {
	reported := make(chan *blitz.PanicError, 1)
	rt := newRuntime(t, blitz.Config{Workers: 1, OnPanic: func(pe *blitz.PanicError) { reported <- pe }})
	call := blitz.Blocking(func() (int, error) { return 42, nil })
	pw := &panicWaker{}
	_, err := blitz.SpawnOn(rt.Handle(), future.PollFn(func(cx *future.Context) (int, bool) {
		child := cx.WithWaker(waker.New(pw))
		if _, ok := call.Poll(&child); ok {
			panic("the blocking call was ready at its first poll")
		}
		return 0, true
	})).Wait(testCtx(t))
	require.NoError(t, err)
	select {
	case pe := <-reported:
		require.Contains(t, fmt.Sprint(pe.Value), "waker boom")
	case <-time.After(10 * time.Second):
		t.Fatal("the waker's panic was not reported to OnPanic")
	}
	require.Equal(t, int32(1), pw.wakes.Load())
	res, err := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](call)).Wait(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, res.Err)
	require.Equal(t, 42, res.Value)
	require.Equal(t, uint64(1), rt.Stats().Panicked)
}
