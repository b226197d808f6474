package scheduler_test

import (
	"context"
	"errors"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// link is one task of a chain of detached spawns: it records the address
// of the task running it (the header, from cx.Task) and spawns the next
// link, the last one signalling done.
type link struct {
	left  int
	s     *scheduler.Scheduler
	seen  *[]*header.Header // appended by one task at a time: the chain is sequential
	done  chan struct{}
	value bool // spawn the next link with a handle (SpawnValue) instead
}

func (l *link) Poll(cx *future.Context) (struct{}, bool) {
	*l.seen = append(*l.seen, cx.Task().(*header.Header))
	next := link{left: l.left - 1, s: l.s, seen: l.seen, done: l.done, value: l.value}
	switch {
	case l.left == 0:
		close(l.done)
	case l.value:
		scheduler.SpawnValue[struct{}](l.s, cx, next)
	default:
		scheduler.SpawnValueDetached[struct{}](l.s, cx, next)
	}
	return struct{}{}, true
}

// distinct counts the distinct addresses in hs.
func distinct(hs []*header.Header) int {
	m := map[*header.Header]bool{}
	for _, h := range hs {
		m[h] = true
	}
	return len(m)
}

// TestSpawnValueDetachedRecycles: a chain of detached spawns on one worker
// reuses a few task objects instead of allocating one per link, while a
// chain spawned with handles never reuses one (its handles could still
// look at the tasks).
func TestSpawnValueDetachedRecycles(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	const n = 1000
	for _, value := range []bool{false, true} {
		var seen []*header.Header
		done := make(chan struct{})
		scheduler.SpawnValueDetached[struct{}](e.s, nil, link{left: n, s: e.s, seen: &seen, done: done, value: value})
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Fatalf("chain (value %v) did not finish; stats %+v", value, e.s.Stats())
		}
		require.Len(t, seen, n+1)
		if value {
			require.Equal(t, n+1, distinct(seen), "a task with a handle was reused")
		} else {
			require.LessOrEqual(t, distinct(seen), 8, "detached chain of %d links: %d task objects", n+1, distinct(seen))
		}
	}
	eventually(t, func() bool { return e.s.Stats().Live == 0 }, "live back to 0")
}

// board delivers the wakes of the stress test's futures from a goroutine:
// each registered Waker once (so that no future waits for ever), and
// Wakers kept from earlier registrations at random, which wake finished
// tasks, or the tasks that reuse their memory: spurious wakes.
type board struct {
	pending chan waker.Waker
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newBoard(capacity int) *board {
	b := &board{pending: make(chan waker.Waker, capacity), stop: make(chan struct{})}
	b.wg.Go(func() {
		var old [256]waker.Waker
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; ; i++ {
			select {
			case wk := <-b.pending:
				wk.Wake()
				old[i%len(old)] = wk
				old[rng.IntN(len(old))].Wake() // stale, most of the time
			case <-b.stop:
				return
			}
		}
	})
	return b
}

func (b *board) close() {
	close(b.stop)
	b.wg.Wait()
}

// record is the stress test's ledger: completions per task id.
type record struct {
	done []atomic.Int32
	e    *env
}

// stressFut waits for steps wakes through the board, then completes with
// its id, once; with chain > 0 it first spawns a detached successor.
type stressFut struct {
	id, steps, chain int
	nextID           *atomic.Int64
	b                *board
	r                *record
	s                *scheduler.Scheduler
}

func (f *stressFut) Poll(cx *future.Context) (int, bool) {
	if f.steps > 0 {
		f.steps--
		f.b.pending <- cx.Waker()
		return 0, false
	}
	if n := f.r.done[f.id].Add(1); n != 1 {
		f.r.e.failf("task %d completed %d times", f.id, n)
	}
	if f.chain > 0 {
		scheduler.SpawnValueDetached[int](f.s, cx, stressFut{
			id: int(f.nextID.Add(1)), steps: f.steps + 1, chain: f.chain - 1,
			nextID: f.nextID, b: f.b, r: f.r, s: f.s,
		})
	}
	return f.id, true
}

// stressRoot is a root of the stress test: on a worker, it spawns its tasks
// with a handle (sent to the test), with a handle it detaches at once, and
// without a handle (chains that recycle).
type stressRoot struct {
	first, count int
	chain        int
	nextID       *atomic.Int64
	b            *board
	r            *record
	s            *scheduler.Scheduler
	handles      chan<- handled
}

// handled is a handle and the id its task must return; detached ones
// must keep answering ErrDetached.
type handled struct {
	id       int
	h        scheduler.JoinHandle[int]
	detached bool
}

func (p *stressRoot) Poll(cx *future.Context) (struct{}, bool) {
	for i := range p.count {
		id := p.first + i
		f := stressFut{id: id, steps: i % 3, nextID: p.nextID, b: p.b, r: p.r, s: p.s}
		switch i % 3 {
		case 0:
			p.handles <- handled{id: id, h: scheduler.SpawnValue[int](p.s, cx, f)}
		case 1:
			h := scheduler.SpawnValue[int](p.s, cx, f)
			h.Detach()
			p.handles <- handled{id: id, h: h, detached: true}
		default:
			f.chain = p.chain
			scheduler.SpawnValueDetached[int](p.s, cx, f)
		}
	}
	return struct{}{}, true
}

// TestRecycleStress spawns, from tasks on four workers, tasks with handles
// (waited on, a fifth of them cancelled), with detached handles and without handles (chains of
// detached spawns, which recycle task objects), all waking through a
// goroutine that also wakes stale Wakers of finished tasks at random. Every
// task must complete exactly once, every handle resolve with its own
// task's id, and a detached handle, polled after thousands of recycles,
// must still answer ErrDetached rather than another task's outcome.
func TestRecycleStress(t *testing.T) {
	roots, perRoot, chain := 40, 60, 20
	if testing.Short() {
		roots, perRoot, chain = 8, 30, 10
	}
	detachedChains := roots * (perRoot / 3) // i % 3 == 2
	total := roots*perRoot + detachedChains*chain
	e := newEnv(t, scheduler.Config{Workers: 4})
	r := &record{done: make([]atomic.Int32, total), e: e}
	b := newBoard(total)
	defer b.close()
	var nextID atomic.Int64
	nextID.Store(int64(roots*perRoot - 1))
	handles := make(chan handled, roots*perRoot)
	// A dump reads the identity of tasks that are recycled meanwhile (the
	// race detector checks that their reuse, which clears it with plain
	// stores, is ordered after the dump's loads).
	dumped := make(chan struct{})
	stopDump := make(chan struct{})
	go func() {
		defer close(dumped)
		for {
			select {
			case <-stopDump:
				return
			default:
			}
			tasks, _ := e.s.Tasks()
			for _, ti := range tasks {
				if ti.ID == 0 || (ti.Polls == 0) != (ti.State == scheduler.TaskQueued) {
					t.Errorf("a dumped task has id %d and %d polls, %s", ti.ID, ti.Polls, ti.State)
					return
				}
			}
		}
	}()
	defer func() { close(stopDump); <-dumped }()
	for i := range roots {
		scheduler.SpawnValueDetached[struct{}](e.s, nil, stressRoot{
			first: i * perRoot, count: perRoot, chain: chain, nextID: &nextID, b: b, r: r, s: e.s, handles: handles,
		})
	}
	var hs []handled
	for range roots * (perRoot - perRoot/3) {
		select {
		case h := <-handles:
			hs = append(hs, h)
		case <-time.After(waitTimeout):
			t.Fatalf("spawners stalled after %d handles; stats %+v", len(hs), e.s.Stats())
		}
	}
	cancelled := map[int]bool{}
	for _, h := range hs {
		if !h.detached && h.id%5 == 0 {
			h.h.Cancel() // some before they complete, some after
		}
	}
	for _, h := range hs {
		if h.detached {
			continue
		}
		v, err := wait(e, h.h, "task with a handle")
		if h.id%5 == 0 && errors.Is(err, scheduler.ErrCancelled) {
			cancelled[h.id] = true
			continue
		}
		require.NoError(t, err)
		require.Equal(t, h.id, v, "a handle resolved with another task's value")
	}
	eventually(t, func() bool {
		for i := range r.done {
			if r.done[i].Load() == 0 && !cancelled[i] {
				return false
			}
		}
		return true
	}, "every task completed (ids up to %d)", total)
	e.checkNow()
	require.Equal(t, int64(total), nextID.Load()+1, "chained spawns")
	for _, h := range hs {
		res, ok := h.h.Poll(future.NewContext(waker.Noop()))
		require.True(t, ok, "handle %d (detached %v) sees an unfinished task: another task reuses its memory", h.id, h.detached)
		if h.detached {
			require.ErrorIs(t, res.Err, scheduler.ErrDetached, "stale detached handle %d", h.id)
			continue
		}
		if cancelled[h.id] {
			require.ErrorIs(t, res.Err, scheduler.ErrCancelled, "handle %d", h.id)
			continue
		}
		require.NoError(t, res.Err)
		require.Equal(t, h.id, res.Value, "a handle's outcome changed after recycles")
	}
	eventually(t, func() bool { return e.s.Stats().Live == 0 }, "live back to 0")
}

// parkForever registers its Waker nowhere and never completes: a detached
// task that only the shutdown ends. cancelled counts its Cancel calls.
type parkForever struct {
	polled, cancelled *atomic.Int32
}

func (p *parkForever) Poll(*future.Context) (struct{}, bool) {
	p.polled.Add(1)
	return struct{}{}, false
}

func (p *parkForever) Cancel() { p.cancelled.Add(1) }

// TestSpawnValueDetachedShutdown: the shutdown cancels a detached task left
// idle (it is reachable through the owned list though no handle refers to
// it), and a detached spawn after the shutdown cancels its future without
// polling it.
func TestSpawnValueDetachedShutdown(t *testing.T) {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	require.NoError(t, err)
	var polled, cancelled atomic.Int32
	scheduler.SpawnValueDetached[struct{}](s, nil, parkForever{polled: &polled, cancelled: &cancelled})
	eventually(t, func() bool { return polled.Load() == 1 }, "polled once")
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	require.Equal(t, int32(1), cancelled.Load())
	scheduler.SpawnValueDetached[struct{}](s, nil, parkForever{polled: &polled, cancelled: &cancelled})
	require.Equal(t, int32(1), polled.Load())
	require.Equal(t, int32(2), cancelled.Load())
	require.Zero(t, s.Stats().Live)
}

// detachedPanic panics; its panic goes to Config.OnPanic.
type detachedPanic struct{}

func (detachedPanic) Poll(*future.Context) (int, bool) { panic("detached boom") }

// TestSpawnValueDetachedPanicReported: the panic of a task without a
// handle is reported to Config.OnPanic.
func TestSpawnValueDetachedPanicReported(t *testing.T) {
	got := make(chan error, 1)
	e := newEnv(t, scheduler.Config{Workers: 1, OnPanic: func(pe *scheduler.PanicError) { got <- pe }})
	scheduler.SpawnValueDetached[int](e.s, nil, detachedPanic{})
	select {
	case err := <-got:
		var pe *scheduler.PanicError
		require.True(t, errors.As(err, &pe))
		require.Equal(t, "detached boom", pe.Value)
	case <-time.After(waitTimeout):
		t.Fatal("panic not reported")
	}
}

// TestSpawnValueDetachedChainAllocs: once its worker has recycled a few
// task objects, a chain of detached spawns allocates nothing per link (a
// finish without a handle used to allocate in the check for a panic, even
// for a nil error, and every link allocated its task).
func TestSpawnValueDetachedChainAllocs(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	const n = 10_000
	run := func() {
		var seen []*header.Header
		done := make(chan struct{})
		scheduler.SpawnValueDetached[struct{}](e.s, nil, link{left: n, s: e.s, seen: &seen, done: done})
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Fatalf("chain did not finish; stats %+v", e.s.Stats())
		}
	}
	run() // warm up: the slice of addresses grows, the slots fill
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	run()
	goruntime.ReadMemStats(&after)
	perLink := float64(after.Mallocs-before.Mallocs) / n
	t.Logf("%.3f allocations per link", perLink)
	require.Less(t, perLink, 0.5, "allocations per link of a detached chain")
}
