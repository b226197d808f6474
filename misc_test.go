package blitz_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

func noopWaker() waker.Waker { return waker.Noop() }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func errDeadline() error { return context.DeadlineExceeded }

// TestConfig rejects invalid configurations with ErrConfig.
func TestConfig(t *testing.T) {
	for _, cfg := range []blitz.Config{
		{Workers: -1},
		{TimerTick: time.Nanosecond},
		{LIFO: 7},
		{MaxLiveTasks: -1},
	} {
		_, err := blitz.New(cfg)
		require.ErrorIs(t, err, blitz.ErrConfig, "%+v", cfg)
	}
}

// TestSpawnInsideAndCurrent spawns from inside a task through the Context,
// and shows Current and ErrNoRuntime.
func TestSpawnInsideAndCurrent(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	got, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Then(future.Ready(20), func(v int) future.Future[future.Result[int]] {
		var h blitz.JoinHandle[int]
		spawned := false
		return future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
			if !spawned {
				cur, ok := blitz.Current(cx)
				require.True(t, ok)
				require.Same(t, rt, cur.Runtime())
				h = blitz.Spawn(cx, future.Ready(v+1))
				spawned = true
			}
			return h.Poll(cx)
		})
	}))
	require.NoError(t, err)
	require.Equal(t, 21, got.Value)

	_, ok := blitz.Current(future.NewContext(noopWaker()))
	require.False(t, ok)
	require.PanicsWithValue(t, blitz.ErrNoRuntime, func() {
		blitz.Spawn(future.NewContext(noopWaker()), future.Ready(1))
	})
	require.PanicsWithValue(t, blitz.ErrZeroHandle, func() { blitz.Handle{}.Runtime() })
}

// TestPanicReachesHandle: a panicking task does not stop the runtime.
func TestPanicReachesHandle(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	h := blitz.SpawnOn(rt.Handle(), future.PollFn(func(*future.Context) (int, bool) { panic("boom") }))
	_, err := h.Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrPanicked)
	var pe *blitz.PanicError
	require.True(t, errors.As(err, &pe))
	require.Equal(t, "boom", pe.Value)
	v, err := blitz.SpawnOn(rt.Handle(), future.Ready(5)).Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 5, v)
}

// TestBackpressure: TrySpawnOn refuses past MaxLiveTasks and admits again
// once tasks finish.
func TestBackpressure(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1, MaxLiveTasks: 2})
	var release atomic.Bool
	gate := func() future.Future[int] {
		return future.PollFn(func(cx *future.Context) (int, bool) {
			if release.Load() {
				return 1, true
			}
			w := cx.Waker()
			go func() { time.Sleep(time.Millisecond); w.Wake() }()
			return 0, false
		})
	}
	h1, err := blitz.TrySpawnOn(rt.Handle(), gate())
	require.NoError(t, err)
	h2, err := blitz.TrySpawnOn(rt.Handle(), gate())
	require.NoError(t, err)
	_, err = blitz.TrySpawnOn(rt.Handle(), gate())
	require.ErrorIs(t, err, blitz.ErrBackpressure)
	release.Store(true)
	for _, h := range []blitz.JoinHandle[int]{h1, h2} {
		_, err := h.Wait(testCtx(t))
		require.NoError(t, err)
	}
	h3, err := blitz.TrySpawnOn(rt.Handle(), future.Ready(3))
	require.NoError(t, err)
	v, err := h3.Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 3, v)
}
