package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// await is a small future that awaits a JoinHandle from a task and maps
// its outcome.
type await[T, U any] struct {
	h  scheduler.JoinHandle[T]
	fn func(future.Result[T]) U
}

func (a await[T, U]) Poll(cx *future.Context) (U, bool) {
	r, ok := a.h.Poll(cx)
	if !ok {
		var zero U
		return zero, false
	}
	return a.fn(r), true
}

// JoinHandle is a future of the task's outcome, and a Canceler.
var (
	_ future.Future[future.Result[int]] = scheduler.JoinHandle[int]{}
	_ future.Canceler                   = scheduler.JoinHandle[int]{}
)

// TestJoinHandlePollRegistersWaker has a task await another task's handle:
// its first poll registers its waker, and the awaited task's completion
// wakes it, exactly once.
func TestJoinHandlePollRegistersWaker(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	g := &gate{}
	hB := scheduler.Spawn(e.s, nil, future.Future[int](gateProbe(e, "awaited", g, 21)))
	a := newProbe(e, "awaiter", await[int, int]{hB, func(r future.Result[int]) int { return 2 * r.Value }}.Poll)
	hA := scheduler.Spawn(e.s, nil, future.Future[int](a))
	eventually(t, func() bool { return a.polls.Load() == 1 && g.registered() }, "both polled")
	time.Sleep(time.Millisecond)
	require.Equal(t, int32(1), a.polls.Load(), "nothing wakes the awaiter before the completion")
	g.Open()
	v, err := wait(e, hA, "awaiter")
	require.NoError(t, err)
	require.Equal(t, 42, v)
	require.Equal(t, int32(2), a.polls.Load(), "one wake, one more poll")

	// Polled again after the outcome, the handle returns the same outcome.
	r, ok := hB.Poll(future.NewContext(waker.Noop()))
	require.True(t, ok)
	require.Equal(t, future.Ok(21), r)
}

// TestJoinHandleChain has each of a chain of tasks await the one before,
// spawned from inside: the completion of the first ripples through all.
func TestJoinHandleChain(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 4})
	g := &gate{}
	var prev scheduler.JoinHandle[int]
	first := scheduler.Spawn(e.s, nil, future.Future[int](gateProbe(e, "first", g, 0)))
	prev = first
	root := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (scheduler.JoinHandle[int], bool) {
		for range 1000 {
			prev = scheduler.Spawn(e.s, cx, future.Future[int](await[int, int]{prev, func(r future.Result[int]) int { return r.Value + 1 }}))
		}
		return prev, true
	}))
	last, err := wait(e, root, "root")
	require.NoError(t, err)
	g.Open()
	v, err := wait(e, last, "last of the chain")
	require.NoError(t, err)
	require.Equal(t, 1000, v)
}

// TestJoinHandleWait waits from a goroutine; a Wait whose context ends
// first returns the context's error and leaves the task running, and a
// later Wait gets the value.
func TestJoinHandleWait(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	g := &gate{}
	p := gateProbe(e, "gated", g, 8)
	h := scheduler.Spawn(e.s, nil, future.Future[int](p))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.Wait(ctx)
	require.ErrorIs(t, err, context.Canceled)

	short, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	_, err = h.Wait(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, h.IsFinished())
	require.Zero(t, p.cancels.Load(), "Wait bounds the wait, not the task")

	got := make(chan int, 1)
	go func() {
		v, err := h.Wait(e.ctx())
		if err != nil {
			e.failf("Wait: %v", err)
		}
		got <- v
	}()
	eventually(t, g.registered, "task polled")
	g.Open()
	require.Equal(t, 8, recv(t, got, "Wait from a goroutine"))
	require.True(t, h.IsFinished())

	// An ended ctx does not hide an outcome that is there.
	v, err := h.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, 8, v)
}

// TestJoinHandleWaitFromTwoGoroutines waits on one handle (the value is
// "copied freely; all copies refer to the same task") from two goroutines
// at once: both must get the value. The handle keeps a single join waker,
// so the second Wait replaces the first's registration and the first is
// never woken.
func TestJoinHandleWaitFromTwoGoroutines(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	g := &gate{}
	h := scheduler.Spawn(e.s, nil, future.Future[int](gateProbe(e, "gated", g, 4)))
	eventually(t, g.registered, "task polled")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	got := make(chan error, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Wait(ctx)
			got <- err
		}()
		time.Sleep(10 * time.Millisecond) // one registers, then the other
	}
	g.Open()
	wg.Wait()
	close(got)
	for err := range got {
		require.NoError(t, err, "a Wait was not woken by the completion (its waker was replaced by the other Wait's)")
	}
}

// TestJoinHandleDetach detaches a handle before the task completes: Poll
// and Wait report ErrDetached, the task runs on to completion, and its
// value is dropped.
func TestJoinHandleDetach(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	g := &gate{}
	p := gateProbe(e, "detached", g, 1)
	h := scheduler.Spawn(e.s, nil, future.Future[int](p))
	h.Detach()
	h.Detach() // twice is fine
	r, ok := h.Poll(future.NewContext(waker.Noop()))
	require.True(t, ok)
	require.ErrorIs(t, r.Err, scheduler.ErrDetached)
	_, err := h.Wait(e.ctx())
	require.ErrorIs(t, err, scheduler.ErrDetached)
	g.Open()
	eventually(t, p.done.Load, "detached task completed")
	eventually(t, func() bool { return e.s.Stats().Live == 0 }, "live back to 0")
	_, err = h.Wait(e.ctx())
	require.ErrorIs(t, err, scheduler.ErrDetached)
	require.False(t, h.IsFinished(), "a detached task's outcome is not kept")
}

// TestJoinHandleDetachAfterCompletion detaches a handle whose task already
// completed: the handle documents that Poll and Wait then return
// ErrDetached; they did once return the zero value and a nil error (Detach
// cleared the result before Poll looked at the detached bit), which a
// caller cannot tell from a task that returned 0.
func TestJoinHandleDetachAfterCompletion(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	h := scheduler.Spawn(e.s, nil, future.Ready(5))
	v, err := wait(e, h, "ready")
	require.NoError(t, err)
	require.Equal(t, 5, v)
	h.Detach()
	r, ok := h.Poll(future.NewContext(waker.Noop()))
	require.True(t, ok)
	require.ErrorIs(t, r.Err, scheduler.ErrDetached, "Poll after Detach returned %+v", r)
	_, err = h.Wait(e.ctx())
	require.ErrorIs(t, err, scheduler.ErrDetached)
}

// TestJoinHandleIsFinished follows IsFinished through a task's life.
func TestJoinHandleIsFinished(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	g := &gate{}
	h := scheduler.Spawn(e.s, nil, future.Future[int](gateProbe(e, "gated", g, 1)))
	require.False(t, h.IsFinished())
	eventually(t, g.registered, "task polled")
	require.False(t, h.IsFinished())
	g.Open()
	eventually(t, h.IsFinished, "finished")
	r, ok := h.Poll(future.NewContext(waker.Noop()))
	require.True(t, ok, "IsFinished means Poll returns at once")
	require.Equal(t, future.Ok(1), r)
}

// TestJoinHandleZeroAndNil checks the misuse panics and errors.
func TestJoinHandleZeroAndNil(t *testing.T) {
	var h scheduler.JoinHandle[int]
	cx := future.NewContext(waker.Noop())
	for name, f := range map[string]func(){
		"Poll":       func() { h.Poll(cx) },
		"Wait":       func() { _, _ = h.Wait(context.Background()) },
		"Cancel":     h.Cancel,
		"Detach":     h.Detach,
		"IsFinished": func() { h.IsFinished() },
	} {
		require.PanicsWithValue(t, scheduler.ErrZeroHandle, f, name)
	}

	e := newEnv(t, scheduler.Config{Workers: 1})
	_, err := wait(e, scheduler.Spawn[int](e.s, nil, nil), "nil spawn")
	require.ErrorIs(t, err, scheduler.ErrNilFuture, "the handle of a nil spawn is resolved with the misuse")
	_, err = scheduler.TrySpawn[int](e.s, nil, nil)
	require.ErrorIs(t, err, scheduler.ErrNilFuture)
	require.Zero(t, e.s.Stats().Live)
}

// TestJoinHandleRaceCancelsLoser races two task handles inside a third
// task with future.Race: the winner's outcome comes out, and the loser,
// abandoned (cancelled) by the race, is aborted with ErrCancelled.
func TestJoinHandleRaceCancelsLoser(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	g := &gate{}
	loser := pendingProbe(e, "loser")
	hLoser := scheduler.Spawn(e.s, nil, future.Future[int](loser))
	hWinner := scheduler.Spawn(e.s, nil, future.Future[int](gateProbe(e, "winner", g, 3)))
	hRace := scheduler.Spawn(e.s, nil, future.Race[future.Result[int]](hLoser, hWinner))
	eventually(t, g.registered, "winner polled")
	g.Open()
	r, err := wait(e, hRace, "race")
	require.NoError(t, err)
	require.Equal(t, future.Ok(3), r)
	requireCancelled(t, e, hLoser, loser, 1)
}
