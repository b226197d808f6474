package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// requireDropped checks that h resolved with ErrShutdown and that its
// future was cancelled exactly once, after polls polls.
func requireDropped(t *testing.T, e *env, h scheduler.JoinHandle[int], p *probe, polls int32) {
	t.Helper()
	_, err := wait(e, h, p.name)
	require.ErrorIs(t, err, scheduler.ErrShutdown, p.name)
	require.Equal(t, int32(1), p.cancels.Load(), "%s: cancels", p.name)
	require.Equal(t, polls, p.polls.Load(), "%s: polls", p.name)
	require.False(t, p.done.Load(), p.name)
}

// TestShutdownDropsTasksEverywhere shuts down a scheduler with tasks in
// every place at once: idle on a waker that never fires, in the global
// queue, in a local queue and the LIFO slot, and running (two polls blocked
// on channels, released only after Shutdown was called). The first
// Shutdown, with a short deadline, must give up with the context's error;
// a second one, in a goroutine, succeeds once the polls return. Then every
// handle resolves: the value of the poll that completed, ErrShutdown for
// every dropped task, whose future's Cancel ran exactly once and which was
// never polled again. Spawn and TrySpawn during and after the shutdown are
// refused, and Shutdown stays idempotent. goleak (TestMain) proves that
// nothing is left running.
func TestShutdownDropsTasksEverywhere(t *testing.T) {
	for _, mode := range []int{scheduler.LIFOSlot, scheduler.LIFOStack, scheduler.LIFOOff} {
		t.Run(fmt.Sprintf("lifo=%d", mode), func(t *testing.T) { testShutdownDropsTasksEverywhere(t, mode) })
	}
}

func testShutdownDropsTasksEverywhere(t *testing.T, lifo int) {
	e := newEnv(t, scheduler.Config{Workers: 2, LIFO: lifo})
	s := e.s

	// Idle on a waker that never fires (it keeps the waker to fire it
	// after the shutdown).
	var idleWaker waker.Waker
	idleP := newProbe(e, "idle", func(cx *future.Context) (int, bool) {
		idleWaker = cx.Waker()
		return 0, false
	})
	hIdle := scheduler.Spawn(s, nil, future.Future[int](idleP))
	eventually(t, func() bool { return idleP.polls.Load() == 1 }, "idle task polled")

	// Running, blocked; returns pending when released.
	in2, rel2 := make(chan struct{}), make(chan struct{})
	r2 := newProbe(e, "running-then-pending", func(*future.Context) (int, bool) {
		close(in2)
		e.block(rel2, "running-then-pending")
		return 0, false
	})
	h2 := scheduler.Spawn(s, nil, future.Future[int](r2))
	recv(t, in2, "second worker blocked")

	// Running on the other worker, blocked after spawning from inside (the
	// LIFO slot and the local queue); completes with 42 when released.
	in1, rel1 := make(chan struct{}), make(chan struct{})
	var locals []*probe
	var hLocals []scheduler.JoinHandle[int]
	r1 := newProbe(e, "running-then-ready", func(cx *future.Context) (int, bool) {
		for i := range 5 {
			p := never(e, fmt.Sprintf("local %d", i))
			locals = append(locals, p)
			hLocals = append(hLocals, scheduler.Spawn(s, cx, future.Future[int](p)))
		}
		close(in1)
		e.block(rel1, "running-then-ready")
		return 42, true
	})
	h1 := scheduler.Spawn(s, nil, future.Future[int](r1))
	recv(t, in1, "first worker blocked")
	st := s.Stats()
	inLIFO := max(lifo, 0) // none with LIFOOff
	require.Equal(t, 5-inLIFO, st.PerWorker[0].LocalQueue+st.PerWorker[1].LocalQueue, "%d tasks in the LIFO, the rest in a local queue", inLIFO)

	// In the global queue: spawned from outside while both workers are
	// blocked.
	globals := make([]*probe, 5)
	hGlobals := make([]scheduler.JoinHandle[int], 5)
	for i := range globals {
		globals[i] = never(e, fmt.Sprintf("global %d", i))
		hGlobals[i] = scheduler.Spawn(s, nil, future.Future[int](globals[i]))
	}
	require.Equal(t, 5, s.Stats().GlobalQueue)
	require.Equal(t, int64(13), s.Stats().Live)

	// A poll that does not return keeps Shutdown from finishing.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Shutdown(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-s.Done():
		t.Fatal("Done closed while a poll is still running")
	default:
	}

	// Spawning during the shutdown is refused.
	during := never(e, "spawned during shutdown")
	hDuring := scheduler.Spawn(s, nil, future.Future[int](during))
	untouched := never(e, "TrySpawn during shutdown")
	_, err = scheduler.TrySpawn(s, nil, future.Future[int](untouched))
	require.ErrorIs(t, err, scheduler.ErrShutdown)

	// Shutdown from a goroutine, then let the polls return.
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	time.Sleep(time.Millisecond)
	close(rel1)
	close(rel2)
	require.NoError(t, recv(t, done, "Shutdown"))
	recv(t, s.Done(), "Done")

	v, err := wait(e, h1, "running-then-ready")
	require.NoError(t, err)
	require.Equal(t, 42, v)
	require.Zero(t, r1.cancels.Load())
	requireDropped(t, e, h2, r2, 1)
	requireDropped(t, e, hIdle, idleP, 1)
	for i, h := range hLocals {
		requireDropped(t, e, h, locals[i], 0)
	}
	for i, h := range hGlobals {
		requireDropped(t, e, h, globals[i], 0)
	}
	requireDropped(t, e, hDuring, during, 0)
	require.Zero(t, untouched.cancels.Load(), "TrySpawn refused the future without taking it")

	// After the shutdown.
	after := never(e, "spawned after shutdown")
	hAfter := scheduler.Spawn(s, nil, future.Future[int](after))
	require.True(t, hAfter.IsFinished(), "a handle of a refused spawn is resolved at once")
	requireDropped(t, e, hAfter, after, 0)
	_, err = scheduler.TrySpawn(s, nil, future.Future[int](untouched))
	require.ErrorIs(t, err, scheduler.ErrShutdown)
	require.Zero(t, untouched.cancels.Load())
	idleWaker.Wake() // a late wake of a dropped task does nothing
	hIdle.Cancel()   // nor does a late cancel
	h1.Cancel()      // of a completed task
	v, err = wait(e, h1, "running-then-ready, after Cancel")
	require.NoError(t, err)
	require.Equal(t, 42, v)
	require.NoError(t, s.Shutdown(context.Background()), "Shutdown is idempotent")
	require.Zero(t, s.Stats().Live)
	require.Zero(t, s.Stats().GlobalQueue)
	e.checkNow()
}

// TestShutdownAfterDoneIgnoresContext calls Shutdown again, after the
// shutdown finished, with a context that has already ended: the shutdown is
// done, so the answer is nil (as waker.Signal.Wait lets a pending wakeup win
// over a done ctx). Shutdown selects between Done and ctx.Done at random
// when both are ready, so this fails about half the calls.
func TestShutdownAfterDoneIgnoresContext(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	e.shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errs := 0
	for range 100 {
		if err := e.s.Shutdown(ctx); err != nil {
			errs++
		}
	}
	require.Zero(t, errs, "of 100 Shutdown calls after the shutdown finished, %d returned the ctx error", errs)
}

// TestShutdownConcurrentCallers calls Shutdown from many goroutines at once
// on a busy scheduler: every call returns nil.
func TestShutdownConcurrentCallers(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 4})
	for range 100 {
		y := scheduler.Yield()
		scheduler.Spawn(e.s, nil, y)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			errs <- e.s.Shutdown(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestShutdownUnderLoad shuts down while tasks yield forever, wait on gates
// that never open, complete, and while goroutines keep spawning and waking.
// Each handle resolves exactly one way: a value (the future completed and
// was never cancelled) or ErrShutdown (the future was cancelled exactly once
// and never completed).
func TestShutdownUnderLoad(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	e := newEnv(t, scheduler.Config{Workers: 4})
	type spawned struct {
		h scheduler.JoinHandle[int]
		p *probe
	}
	var mu sync.Mutex
	var all []spawned
	var gates []*gate
	add := func(h scheduler.JoinHandle[int], p *probe) {
		mu.Lock()
		all = append(all, spawned{h, p})
		mu.Unlock()
	}
	mk := func(i int) *probe {
		switch i % 4 {
		case 0: // yields forever, spawning a child now and then
			var y scheduler.YieldFuture
			k := 0
			return newProbe(e, fmt.Sprintf("yielder %d", i), func(cx *future.Context) (int, bool) {
				if _, ok := y.Poll(cx); ok {
					y.Reset()
					y.Poll(cx)
				}
				if k++; k%16 == 0 {
					c := newProbe(e, "child", func(*future.Context) (int, bool) { return 7, true })
					add(scheduler.Spawn(e.s, cx, future.Future[int](c)), c)
				}
				return 0, false
			})
		case 1: // idle forever
			g := &gate{}
			mu.Lock()
			gates = append(gates, g)
			mu.Unlock()
			return gateProbe(e, fmt.Sprintf("gated %d", i), g, i)
		default: // completes
			return newProbe(e, fmt.Sprintf("ready %d", i), func(*future.Context) (int, bool) { return i, true })
		}
	}
	for i := range n {
		p := mk(i)
		add(scheduler.Spawn(e.s, nil, future.Future[int](p)), p)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for j := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n + j; !stop.Load(); i += 4 {
				p := mk(i)
				add(scheduler.Spawn(e.s, nil, future.Future[int](p)), p)
				mu.Lock()
				g := gates[i%len(gates)]
				mu.Unlock()
				g.wake()
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	e.shutdown()
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	var values, dropped int
	for _, sp := range all {
		v, err := wait(e, sp.h, sp.p.name)
		switch {
		case err == nil:
			values++
			if !sp.p.done.Load() || sp.p.cancels.Load() != 0 || (v != 7 && sp.p.name != fmt.Sprintf("ready %d", v)) {
				t.Fatalf("%s: value %d but done %v cancels %d", sp.p.name, v, sp.p.done.Load(), sp.p.cancels.Load())
			}
		case assert.ErrorIs(t, err, scheduler.ErrShutdown, sp.p.name):
			dropped++
			if sp.p.done.Load() || sp.p.cancels.Load() != 1 {
				t.Fatalf("%s: dropped but done %v cancels %d", sp.p.name, sp.p.done.Load(), sp.p.cancels.Load())
			}
		}
	}
	t.Logf("%d tasks: %d values, %d dropped", len(all), values, dropped)
	require.Positive(t, dropped)
	require.Zero(t, e.s.Stats().Live)
}
