package blitz_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ioBackends are the backends the I/O tests run on here: the automatic
// choice, and each backend of the platform forced.
func ioBackends(t *testing.T) []string {
	names := []string{blitz.BackendAuto}
	for _, n := range []string{blitz.BackendURing, blitz.BackendEpoll, blitz.BackendKqueue, blitz.BackendPoll, blitz.BackendIOCP} {
		rt, err := blitz.New(blitz.Config{Workers: 1, Backend: n})
		if err != nil {
			require.ErrorIs(t, err, blitz.ErrBackend)
			continue
		}
		require.Equal(t, n, rt.Backend())
		require.NoError(t, rt.Shutdown(context.Background()))
		names = append(names, n)
	}
	return names
}

func forEachBackend(t *testing.T, f func(t *testing.T, cfg blitz.Config)) {
	for _, name := range ioBackends(t) {
		label := name
		if label == "" {
			label = "auto"
		}
		t.Run(label, func(t *testing.T) { f(t, blitz.Config{Backend: name}) })
	}
}

func TestBackendSelection(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	assert.NotEqual(t, blitz.BackendNone, rt.Backend(), "the automatic choice finds a backend here")
	none := newRuntime(t, blitz.Config{Workers: 1, Backend: blitz.BackendNone})
	assert.Equal(t, blitz.BackendNone, none.Backend())
	_, err := blitz.New(blitz.Config{Backend: "carrier-pigeon"})
	assert.ErrorIs(t, err, blitz.ErrBackend)
}

// A completion wakes the task that waits for it.
func TestIOCompletionWakesTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		start := time.Now()
		h := blitz.SpawnOn(rt.Handle(), blitz.NewOpFuture(backend.Op{Kind: backend.KindTimeout, Timeout: 20 * time.Millisecond}))
		c, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.ErrorIs(t, c.Err, backend.ErrTimeout)
		assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

		nop, err := blitz.SpawnOn(rt.Handle(), blitz.NewOpFuture(backend.Op{Kind: backend.KindNop, UserData: 7})).Wait(testCtx(t))
		require.NoError(t, err)
		assert.NoError(t, nop.Err)
		assert.Equal(t, uint64(7), nop.UserData)
		assert.Zero(t, rt.IOErrors())
	})
}

// The one worker sleeps in the backend's Wait (a long op pending, nothing
// else to do); a spawn from a goroutine must end that sleep at once.
func TestIOParkedWorkerWokenBySpawn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 1
		rt := newRuntime(t, cfg)
		long := blitz.SpawnOn(rt.Handle(), blitz.NewOpFuture(backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}))
		for i := range 50 {
			time.Sleep(time.Duration(i%5) * time.Millisecond) // let the worker park in the backend
			start := time.Now()
			v, err := blitz.SpawnOn(rt.Handle(), future.Ready(i)).Wait(testCtx(t))
			require.NoError(t, err)
			require.Equal(t, i, v)
			require.Less(t, time.Since(start), 2*time.Second, "round %d: the spawn waited for the backend", i)
		}
		long.Cancel()
		_, err := long.Wait(testCtx(t))
		assert.ErrorIs(t, err, blitz.ErrCancelled)
	})
}

// A timer sooner than the one the sleeping worker waits for kicks it: the
// worker sleeps towards an hour-long deadline, and a 10 ms sleep armed from
// a goroutine (BlockOn) must end in about 10 ms.
func TestIOTimerKicksSleepingWorker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 1
		rt := newRuntime(t, cfg)
		long := blitz.SpawnOn(rt.Handle(), blitz.Sleep(time.Hour))
		time.Sleep(10 * time.Millisecond)
		for range 5 {
			start := time.Now()
			_, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Sleep(10*time.Millisecond))
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
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt, err := blitz.New(cfg)
		require.NoError(t, err)
		var hs []blitz.JoinHandle[backend.Completion]
		for range 20 {
			hs = append(hs, blitz.SpawnOn(rt.Handle(), blitz.NewOpFuture(backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour})))
		}
		time.Sleep(10 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
		for _, h := range hs {
			_, err := h.Wait(ctx)
			assert.True(t, errors.Is(err, blitz.ErrShutdown) || errors.Is(err, blitz.ErrCancelled), "%v", err)
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
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		hs := make([]blitz.JoinHandle[backend.Completion], n)
		for i := range hs {
			op := backend.Op{Kind: backend.KindNop, UserData: uint64(i)}
			if i%3 == 0 {
				op = backend.Op{Kind: backend.KindTimeout, Timeout: time.Duration(i%7) * time.Millisecond, UserData: uint64(i)}
			}
			hs[i] = blitz.SpawnOn(rt.Handle(), blitz.NewOpFuture(op))
		}
		for i, h := range hs {
			c, err := h.Wait(testCtx(t))
			require.NoError(t, err)
			require.Equal(t, uint64(i), c.UserData)
		}
		assert.Zero(t, rt.IOErrors())
	})
}
