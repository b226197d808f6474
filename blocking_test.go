package blitz_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestSpawnBlockingValue: the value reaches the handle, from a goroutine
// (Wait) and from a task (polling the handle).
func TestSpawnBlockingValue(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendNone})
	h := rt.Handle()
	jh := blitz.SpawnBlocking(h, func() int { time.Sleep(5 * time.Millisecond); return 42 })
	v, err := jh.Wait(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, 42, v)

	// From a task that awaits the call.
	inTask := blitz.SpawnOn(h, future.Future[future.Result[int]](blitz.Blocking(func() (int, error) { return 7, nil })))
	r, err := inTask.Wait(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, r.Err)
	assert.Equal(t, 7, r.Value)
}

// TestBlockingError: fn's error is the result's.
func TestBlockingError(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendNone})
	boom := errors.New("boom")
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[int]](blitz.Blocking(func() (int, error) { return 0, boom })))
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, boom)
}

// TestSpawnBlockingPanic: a panic in fn reaches the handle as a
// *PanicError with fn's own stack, and the pool and runtime live on.
func TestSpawnBlockingPanic(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendNone})
	jh := blitz.SpawnBlocking(rt.Handle(), func() int { panicInBlockingFn(); return 0 })
	_, err := jh.Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrPanicked)
	var pe *blitz.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "blocking boom", pe.Value)
	assert.Contains(t, string(pe.Stack), "panicInBlockingFn", "the stack is the blocking function's")
	v, err := blitz.SpawnBlocking(rt.Handle(), func() int { return 1 }).Wait(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, 1, v)
}

func panicInBlockingFn() { panic("blocking boom") }

// TestSpawnBlockingBurst: many calls that block at once all complete with
// a small cap, and no worker is held: a task keeps running meanwhile.
func TestSpawnBlockingBurst(t *testing.T) {
	const cap = 8
	n := 2000
	if testing.Short() {
		n = 300
	}
	rt := newRuntime(t, blitz.Config{Workers: 1, Backend: blitz.BackendNone, BlockingThreads: cap})
	var running, peak atomic.Int64
	hs := make([]blitz.JoinHandle[int], n)
	for i := range hs {
		hs[i] = blitz.SpawnBlocking(rt.Handle(), func() int {
			cur := running.Add(1)
			for {
				p := peak.Load()
				if cur <= p || peak.CompareAndSwap(p, cur) {
					break
				}
			}
			time.Sleep(100 * time.Microsecond)
			running.Add(-1)
			return i
		})
	}
	// The single worker is free while the pool works.
	_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[struct{}](blitz.Sleep(time.Millisecond)))
	require.NoError(t, err)
	for i, jh := range hs {
		v, err := jh.Wait(testCtx(t))
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	assert.LessOrEqual(t, peak.Load(), int64(cap), "the cap holds")
	assert.Greater(t, peak.Load(), int64(1), "calls ran in parallel")
}

// TestBlockingCancel: a cancelled call runs to its end, and its result is
// dropped without waking anyone.
func TestBlockingCancel(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendNone})
	release := make(chan struct{})
	var ran sync.WaitGroup
	ran.Add(1)
	f := blitz.Blocking(func() (int, error) { defer ran.Done(); <-release; return 1, nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[int]](f))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // the call is running
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	close(release)
	ran.Wait()
}

// TestBlockingOutsideRuntime: polled by no runtime, the call fails with
// ErrNoRuntime instead of running somewhere unaccounted.
func TestBlockingOutsideRuntime(t *testing.T) {
	r, err := future.Block(context.Background(), future.Future[future.Result[int]](blitz.Blocking(func() (int, error) { return 1, nil })))
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, blitz.ErrNoRuntime)
}

// TestBlockingConfig: the pool's Config is validated.
func TestBlockingConfig(t *testing.T) {
	_, err := blitz.New(blitz.Config{BlockingThreads: -1})
	require.ErrorIs(t, err, blitz.ErrConfig)
	_, err = blitz.New(blitz.Config{BlockingIdleTimeout: -time.Second})
	require.ErrorIs(t, err, blitz.ErrConfig)
}

// TestShutdownRejectsQueuedBlocking: after Shutdown, SpawnBlocking
// reports ErrShutdown, and Shutdown waited for the running call.
func TestShutdownRejectsQueuedBlocking(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Backend: blitz.BackendNone})
	require.NoError(t, err)
	var finished atomic.Bool
	started := make(chan struct{})
	jh := blitz.SpawnBlocking(rt.Handle(), func() int { close(started); time.Sleep(30 * time.Millisecond); finished.Store(true); return 1 })
	<-started
	require.NoError(t, rt.Shutdown(testCtx(t)))
	assert.True(t, finished.Load(), "Shutdown waited for the running call")
	_, err = jh.Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrShutdown)
	_, err = blitz.SpawnBlocking(rt.Handle(), func() int { return 1 }).Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrShutdown)
}
