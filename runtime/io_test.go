package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ioBackends are the backends the I/O tests run on here: the automatic
// choice, and each backend of the platform forced.
func ioBackends(t *testing.T) []string {
	names := []string{runtime.BackendAuto}
	for _, n := range []string{runtime.BackendURing, runtime.BackendEpoll, runtime.BackendKqueue, runtime.BackendIOCP} {
		rt, err := runtime.New(runtime.Config{Workers: 1, Backend: n})
		if err != nil {
			require.ErrorIs(t, err, runtime.ErrBackend)
			continue
		}
		require.Equal(t, n, rt.Backend())
		require.NoError(t, rt.Shutdown(context.Background()))
		names = append(names, n)
	}
	return names
}

func forEachBackend(t *testing.T, f func(t *testing.T, cfg runtime.Config)) {
	for _, name := range ioBackends(t) {
		label := name
		if label == "" {
			label = "auto"
		}
		t.Run(label, func(t *testing.T) { f(t, runtime.Config{Backend: name}) })
	}
}

func TestBackendSelection(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 1})
	assert.NotEqual(t, runtime.BackendNone, rt.Backend(), "the automatic choice finds a backend here")
	none := newRuntime(t, runtime.Config{Workers: 1, Backend: runtime.BackendNone})
	assert.Equal(t, runtime.BackendNone, none.Backend())
	_, err := runtime.New(runtime.Config{Backend: "carrier-pigeon"})
	assert.ErrorIs(t, err, runtime.ErrBackend)
}

// A completion wakes the task that waits for it.
func TestIOCompletionWakesTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		start := time.Now()
		h := runtime.SpawnOn(rt.Handle(), runtime.NewOpFuture(backend.Op{Kind: backend.KindTimeout, Timeout: 20 * time.Millisecond}))
		c, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.ErrorIs(t, c.Err, backend.ErrTimeout)
		assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

		nop, err := runtime.SpawnOn(rt.Handle(), runtime.NewOpFuture(backend.Op{Kind: backend.KindNop, UserData: 7})).Wait(testCtx(t))
		require.NoError(t, err)
		assert.NoError(t, nop.Err)
		assert.Equal(t, uint64(7), nop.UserData)
		assert.Zero(t, rt.IOErrors())
	})
}

// The one worker sleeps in the backend's Wait (a long op pending, nothing
// else to do); a spawn from a goroutine must end that sleep at once.
func TestIOParkedWorkerWokenBySpawn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
		cfg.Workers = 1
		rt := newRuntime(t, cfg)
		long := runtime.SpawnOn(rt.Handle(), runtime.NewOpFuture(backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}))
		for i := range 50 {
			time.Sleep(time.Duration(i%5) * time.Millisecond) // let the worker park in the backend
			start := time.Now()
			v, err := runtime.SpawnOn(rt.Handle(), future.Ready(i)).Wait(testCtx(t))
			require.NoError(t, err)
			require.Equal(t, i, v)
			require.Less(t, time.Since(start), 2*time.Second, "round %d: the spawn waited for the backend", i)
		}
		long.Cancel()
		_, err := long.Wait(testCtx(t))
		assert.ErrorIs(t, err, runtime.ErrCancelled)
	})
}

// A timer sooner than the one the sleeping worker waits for kicks it: the
// worker sleeps towards an hour-long deadline, and a 10 ms sleep armed from
// a goroutine (BlockOn) must end in about 10 ms.
func TestIOTimerKicksSleepingWorker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
		cfg.Workers = 1
		rt := newRuntime(t, cfg)
		long := runtime.SpawnOn(rt.Handle(), runtime.Sleep(time.Hour))
		time.Sleep(10 * time.Millisecond)
		for range 5 {
			start := time.Now()
			_, err := runtime.BlockOn(testCtx(t), rt.Handle(), runtime.Sleep(10*time.Millisecond))
			require.NoError(t, err)
			require.Less(t, time.Since(start), time.Second)
		}
		long.Cancel()
		_, _ = long.Wait(testCtx(t))
	})
}

// Shutting down with ops in flight cancels their tasks and closes the
// backend; nothing leaks (goleak in TestMain) and nothing hangs.
func TestIOShutdownWithOpsInFlight(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
		cfg.Workers = 2
		rt, err := runtime.New(cfg)
		require.NoError(t, err)
		var hs []runtime.JoinHandle[backend.Completion]
		for range 20 {
			hs = append(hs, runtime.SpawnOn(rt.Handle(), runtime.NewOpFuture(backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour})))
		}
		time.Sleep(10 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
		for _, h := range hs {
			_, err := h.Wait(ctx)
			assert.True(t, errors.Is(err, runtime.ErrShutdown) || errors.Is(err, runtime.ErrCancelled), "%v", err)
		}
	})
}

// Many ops complete through the driver while tasks also ping-pong: every
// completion reaches its task exactly once.
func TestIOManyOps(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		hs := make([]runtime.JoinHandle[backend.Completion], n)
		for i := range hs {
			op := backend.Op{Kind: backend.KindNop, UserData: uint64(i)}
			if i%3 == 0 {
				op = backend.Op{Kind: backend.KindTimeout, Timeout: time.Duration(i%7) * time.Millisecond, UserData: uint64(i)}
			}
			hs[i] = runtime.SpawnOn(rt.Handle(), runtime.NewOpFuture(op))
		}
		for i, h := range hs {
			c, err := h.Wait(testCtx(t))
			require.NoError(t, err)
			require.Equal(t, uint64(i), c.UserData)
		}
		assert.Zero(t, rt.IOErrors())
	})
}
