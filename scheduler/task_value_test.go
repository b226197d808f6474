package scheduler_test

import (
	"errors"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// countdown is a future held by value: its Poll has a pointer receiver and
// changes the copy inside the task, waking itself until left reaches zero.
type countdown struct {
	left  int
	polls int
}

func (c *countdown) Poll(cx *future.Context) (int, bool) {
	c.polls++
	if c.left > 0 {
		c.left--
		cx.Waker().Wake()
		return 0, false
	}
	return c.polls, true
}

// valueLeaf has a value receiver: *valueLeaf has its method too.
type valueLeaf struct{ v string }

func (l valueLeaf) Poll(*future.Context) (string, bool) { return l.v, true }

// TestSpawnValuePollsInPlace: SpawnValue's future type is inferred from
// the future (pointer and value receivers), and a future that keeps state
// across polls sees its own changes (it is polled through the task's copy,
// not a fresh copy per poll).
func TestSpawnValuePollsInPlace(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	h := scheduler.SpawnValue[int](e.s, nil, countdown{left: 5})
	polls, err := wait(e, h, "countdown")
	require.NoError(t, err)
	require.Equal(t, 6, polls, "five pending polls and the one that completed")

	var hs scheduler.JoinHandle[string] = scheduler.SpawnValue[string](e.s, nil, valueLeaf{v: "leaf"})
	v, err := wait(e, hs, "valueLeaf")
	require.NoError(t, err)
	require.Equal(t, "leaf", v)
}

// spawnValueFromTask spawns a countdown by value from inside its poll (the
// spawning worker's LIFO path) and returns the child's result.
type spawnValueFromTask struct {
	s     *scheduler.Scheduler
	child scheduler.JoinHandle[int]
	began bool
}

func (p *spawnValueFromTask) Poll(cx *future.Context) (int, bool) {
	if !p.began {
		p.began = true
		p.child = scheduler.SpawnValue[int](p.s, cx, countdown{left: 2})
	}
	r, ok := p.child.Poll(cx)
	if !ok {
		return 0, false
	}
	if r.Err != nil {
		return -1, true
	}
	return r.Value, true
}

// TestSpawnValueFromTask: a value spawn from a worker runs and its handle,
// awaited by the spawner, resolves.
func TestSpawnValueFromTask(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	h := scheduler.SpawnValue[int](e.s, nil, spawnValueFromTask{s: e.s})
	v, err := wait(e, h, "spawner")
	require.NoError(t, err)
	require.Equal(t, 3, v)
}

// idleCanceller parks forever and counts its Cancel calls (pointer
// receiver, on the task's copy).
type idleCanceller struct {
	polled    *atomic.Int32
	cancelled *atomic.Int32
	wk        waker.Waker
}

func (f *idleCanceller) Poll(cx *future.Context) (struct{}, bool) {
	if f.wk.IsZero() {
		f.wk = cx.Waker()
		f.polled.Add(1)
	}
	return struct{}{}, false
}

func (f *idleCanceller) Cancel() { f.cancelled.Add(1) }

// TestSpawnValueCancel: JoinHandle.Cancel of an idle value task calls the
// future's Cancel once, on the task's copy, and resolves the handle with
// ErrCancelled; the shutdown does the same for a task left idle, with
// ErrShutdown.
func TestSpawnValueCancel(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	var polled, cancelled atomic.Int32
	h := scheduler.SpawnValue[struct{}](e.s, nil, idleCanceller{polled: &polled, cancelled: &cancelled})
	eventually(t, func() bool { return polled.Load() == 1 }, "idle task polled")
	h.Cancel()
	h.Cancel()
	_, err := wait(e, h, "cancelled task")
	require.ErrorIs(t, err, scheduler.ErrCancelled)
	require.Equal(t, int32(1), cancelled.Load())

	s, err := scheduler.New(scheduler.Config{Workers: 1})
	require.NoError(t, err)
	var polled2, cancelled2 atomic.Int32
	h2 := scheduler.SpawnValue[struct{}](s, nil, idleCanceller{polled: &polled2, cancelled: &cancelled2})
	eventually(t, func() bool { return polled2.Load() == 1 }, "idle task polled")
	require.NoError(t, s.Shutdown(e.ctx()))
	_, err = h2.Wait(e.ctx())
	require.ErrorIs(t, err, scheduler.ErrShutdown)
	require.Equal(t, int32(1), cancelled2.Load())

	// After the shutdown the future is not started: cancelled, and the
	// handle resolved with ErrShutdown.
	var polled3, cancelled3 atomic.Int32
	h3 := scheduler.SpawnValue[struct{}](s, nil, idleCanceller{polled: &polled3, cancelled: &cancelled3})
	_, err = h3.Wait(e.ctx())
	require.ErrorIs(t, err, scheduler.ErrShutdown)
	require.Equal(t, int32(0), polled3.Load())
	require.Equal(t, int32(1), cancelled3.Load())
}

// panicker panics in its poll and counts its Cancel.
type panicker struct{ cancelled *atomic.Int32 }

func (p *panicker) Poll(*future.Context) (int, bool) { panic("value task panics") }
func (p *panicker) Cancel()                          { p.cancelled.Add(1) }

// TestSpawnValuePanic: a panic of a value future's poll resolves the handle
// with a *PanicError, after the future's Cancel ran.
func TestSpawnValuePanic(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	var cancelled atomic.Int32
	h := scheduler.SpawnValue[int](e.s, nil, panicker{cancelled: &cancelled})
	_, err := wait(e, h, "panicking task")
	var pe *scheduler.PanicError
	require.True(t, errors.As(err, &pe), "err %v", err)
	require.Equal(t, "value task panics", pe.Value)
	require.Equal(t, int32(1), cancelled.Load())
}

// holder references a large object, to see whether the task keeps it.
type holder struct{ big *[1 << 16]byte }

func (h *holder) Poll(*future.Context) (int, bool) { return len(h.big), true }

// TestSpawnValueDropsFuture: once a value task completed, what its future
// referred to is garbage, though the handle (and so the task) is alive.
func TestSpawnValueDropsFuture(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	var freed atomic.Bool
	big := new([1 << 16]byte)
	goruntime.AddCleanup(big, func(f *atomic.Bool) { f.Store(true) }, &freed)
	h := scheduler.SpawnValue[int](e.s, nil, holder{big: big})
	big = nil
	v, err := wait(e, h, "holder")
	require.NoError(t, err)
	require.Equal(t, 1<<16, v)
	deadline := time.Now().Add(waitTimeout)
	for !freed.Load() && time.Now().Before(deadline) {
		goruntime.GC()
		time.Sleep(time.Millisecond)
	}
	require.True(t, freed.Load(), "the completed task still references its future's data")
	goruntime.KeepAlive(h)
}
