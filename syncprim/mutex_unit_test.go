package syncprim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

// lockHolder keeps a LockFuture at a fixed address.
type lockHolder struct{ f LockFuture }

func newLock(m *Mutex) *lockHolder {
	h := new(lockHolder)
	h.f = *m.Lock()
	return h
}

func TestMutexBasics(t *testing.T) {
	var m Mutex
	g, ok := m.TryLock()
	require.True(t, ok)
	_, ok = m.TryLock()
	require.False(t, ok)
	g.Unlock()
	require.PanicsWithValue(t, ErrGuardReleased, func() { g.Unlock() })
	require.PanicsWithValue(t, ErrNotLocked, func() { MutexGuard{}.Unlock() })
	g, err := m.LockBlocking(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err = m.LockBlocking(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, m.waiters())
	g.Unlock()
	// A done ctx and a free mutex: the mutex wins.
	g, err = m.LockBlocking(ctx)
	require.NoError(t, err)
	g.Unlock()
}

// TestMutexFuture walks the future tier through the policy step by step:
// an unlock with a waiter queued frees the lock and wakes the waiter; a
// locker that comes first takes it (barging); the woken waiter that finds
// it taken goes back to the front and is handed the lock at the next
// unlock, which keeps the lock locked so that nobody barges in between.
func TestMutexFuture(t *testing.T) {
	var m Mutex
	cx, cw := newCountCx()
	a := newLock(&m)
	ga, ok := a.f.Poll(cx)
	require.True(t, ok)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { a.f.Poll(cx) })
	b, c := newLock(&m), newLock(&m)
	_, ok = b.f.Poll(cx)
	require.False(t, ok)
	_, ok = c.f.Poll(cx)
	require.False(t, ok)
	_, ok = m.TryLock()
	require.False(t, ok)
	require.Equal(t, 2, m.waiters())

	ga.Unlock() // frees the lock and wakes b
	require.Equal(t, int32(1), cw.n.Load())
	require.Equal(t, 1, m.waiters(), "b left the list when woken")
	g, ok := m.TryLock() // barges past the woken b
	require.True(t, ok, "the lock is free until b retries")
	_, ok = b.f.Poll(cx) // b lost the race: back to the front, marked
	require.False(t, ok)
	require.Equal(t, 2, m.waiters())
	g.Unlock() // hand-off to b: nobody is woken to race
	require.Equal(t, int32(2), cw.n.Load())
	_, ok = m.TryLock()
	require.False(t, ok, "the lock was handed to b")

	// Cancel b after the hand-off, before its re-poll: the lock passes on,
	// c is woken and takes it.
	b.f.Cancel()
	require.Equal(t, int32(3), cw.n.Load())
	gc, ok := c.f.Poll(cx)
	require.True(t, ok)
	gc.Unlock()
	require.PanicsWithValue(t, ErrGuardReleased, func() { gc.Unlock() })
	g, ok = m.TryLock()
	require.True(t, ok)
	g.Unlock()
	require.Equal(t, 0, m.waiters())

	d := newLock(&m)
	d.f.Cancel() // before the first poll
	require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { d.f.Poll(cx) })
	g, ok = m.TryLock()
	require.True(t, ok)
	g.Unlock()
}

// TestMutexWokenCancelPassesTheWakeOn: a waiter woken by an unlock that
// gives up before it tries passes the wake to the next waiter, which would
// otherwise wait for an unlock that never comes.
func TestMutexWokenCancelPassesTheWakeOn(t *testing.T) {
	var m Mutex
	cx, cw := newCountCx()
	g, _ := m.TryLock()
	b, c := newLock(&m), newLock(&m)
	_, ok := b.f.Poll(cx)
	require.False(t, ok)
	_, ok = c.f.Poll(cx)
	require.False(t, ok)
	g.Unlock() // wakes b
	require.Equal(t, int32(1), cw.n.Load())
	b.f.Cancel() // gives up without trying: the lock is free, c is woken
	require.Equal(t, int32(2), cw.n.Load())
	gc, ok := c.f.Poll(cx)
	require.True(t, ok)
	gc.Unlock()
	require.Equal(t, 0, m.waiters())
	g, ok = m.TryLock()
	require.True(t, ok)
	g.Unlock()
}

func TestMutexBlockingHandOffCancel(t *testing.T) {
	var m Mutex
	g, _ := m.TryLock()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		g2, err := m.LockBlocking(ctx)
		if err == nil {
			g2.Unlock()
		}
		errc <- err
	}()
	require.True(t, waitUntil(t, "one queued locker", func() bool { return m.waiters() == 1 }))
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	g.Unlock()
	g, ok := m.TryLock()
	require.True(t, ok)
	g.Unlock()
}

// refMutex is the reference Mutex: the waiters' FIFO, the one woken
// waiter and the hand-off mark, written as plainly as possible.
// Single-threaded.
type refMutex struct {
	locked  bool
	q       []*refMW // queued waiters, oldest first
	woken   *refMW   // taken off q and woken to try
	handoff bool     // q[0] lost a race: the next unlock hands it the lock
}

// refMW is one reference Lock future: state is what its next poll finds,
// wakes how many times it was woken.
type refMW struct {
	state int // rwQueued, rwGranted, rmWoken, rwFinished
	wakes int
}

const rmWoken = rwFinished + 1

func (r *refMutex) try() bool {
	if r.locked {
		return false
	}
	r.locked = true
	return true
}

// lock is a Lock future's first poll.
func (r *refMutex) lock(w *refMW) bool {
	if r.try() {
		w.state = rwFinished
		return true
	}
	w.state = rwQueued
	r.q = append(r.q, w)
	return false
}

func (r *refMutex) unlock() {
	switch {
	case r.handoff:
		w := r.q[0]
		r.q = r.q[1:]
		r.handoff = false
		w.state = rwGranted
		w.wakes++
	case len(r.q) > 0 && r.woken == nil:
		w := r.q[0]
		r.q = r.q[1:]
		r.woken = w
		w.state = rmWoken
		w.wakes++
		r.locked = false
	default:
		r.locked = false
	}
}

// poll is a later poll of a pending future.
func (r *refMutex) poll(w *refMW) bool {
	switch w.state {
	case rwGranted:
		w.state = rwFinished
		return true
	case rmWoken:
		r.woken = nil
		if r.try() {
			w.state = rwFinished
			return true
		}
		w.state = rwQueued
		r.q = append([]*refMW{w}, r.q...)
		r.handoff = true
	}
	return false
}

func (r *refMutex) cancel(w *refMW) {
	switch w.state {
	case rwQueued:
		i := slices.Index(r.q, w)
		if i == 0 {
			r.handoff = false
		}
		r.q = slices.Delete(r.q, i, i+1)
	case rwGranted:
		r.unlock()
	case rmWoken:
		r.woken = nil
		if !r.locked && len(r.q) > 0 {
			n := r.q[0]
			r.q = r.q[1:]
			r.woken = n
			n.state = rmWoken
			n.wakes++
		}
	}
	w.state = rwFinished
}

// TestMutexModel drives random sequences of TryLock, Lock (poll, cancel)
// and Unlock against refMutex, comparing every result, the queue length,
// whether the mutex is locked, and how often each future was woken.
func TestMutexModel(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 3))
		var m Mutex
		ref := &refMutex{}
		type pair struct {
			h  *lockHolder
			w  *refMW
			cx *future.Context
			cw *countWaker
		}
		var live []pair
		var held []MutexGuard
		for step := range 60 {
			switch op := rng.IntN(8); {
			case op < 2:
				g, ok := m.TryLock()
				require.Equal(t, ref.try(), ok, "round %d step %d: TryLock", round, step)
				if ok {
					held = append(held, g)
				}
			case op < 4:
				cx, cw := newCountCx()
				p := pair{newLock(&m), &refMW{}, cx, cw}
				g, ok := p.h.f.Poll(cx)
				require.Equal(t, ref.lock(p.w), ok, "round %d step %d: first poll", round, step)
				if ok {
					held = append(held, g)
				} else {
					live = append(live, p)
				}
			case op < 5 && len(held) > 0:
				held[0].Unlock()
				held = held[1:]
				ref.unlock()
			case op < 7 && len(live) > 0:
				i := rng.IntN(len(live))
				g, ok := live[i].h.f.Poll(live[i].cx)
				require.Equal(t, ref.poll(live[i].w), ok, "round %d step %d: poll", round, step)
				if ok {
					held = append(held, g)
					live = slices.Delete(live, i, i+1)
				}
			case len(live) > 0:
				i := rng.IntN(len(live))
				live[i].h.f.Cancel()
				ref.cancel(live[i].w)
				live = slices.Delete(live, i, i+1)
			}
			require.LessOrEqual(t, len(held), 1)
			require.Equal(t, len(ref.q), m.waiters(), "round %d step %d: waiters", round, step)
			require.Equal(t, ref.locked, m.state.Load()&mLocked != 0, "round %d step %d: locked", round, step)
			for _, p := range live {
				require.Equal(t, p.w.wakes, int(p.cw.n.Load()), "round %d step %d: wakes", round, step)
			}
		}
	}
}

// TestMutexBlockingWokenAfterCtxDone: a goroutine's wait ends with its
// ctx's error, and the unlock's wake lands just after (simulated here by
// waiting on a Signal other than the one the wake goes to). If the lock is
// free, the goroutine takes it (a free lock wins over a done ctx); if a
// locker barged in, the goroutine gives up and the wake passes on: the
// holder's unlock wakes the next waiter.
func TestMutexBlockingWokenAfterCtxDone(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	queue := func(m *Mutex) (*waker.Waiter[mutexWait], waker.Waker) {
		w, wk := new(waker.Waiter[mutexWait]), waker.New(new(waker.Signal))
		m.mu.Lock()
		_, ok := m.queueLocked(w, wk, false)
		m.mu.Unlock()
		require.False(t, ok)
		return w, wk
	}

	var m Mutex
	g, _ := m.TryLock()
	w, wk := queue(&m)
	g.Unlock() // wakes w; the lock is free
	gen, err := m.waitBlocking(done, w, new(waker.Signal), wk)
	require.NoError(t, err, "the free lock wins")
	_, ok := m.TryLock()
	require.False(t, ok)
	MutexGuard{m: &m, seq: gen}.Unlock()
	require.Zero(t, m.state.Load()&(mLocked|mWaiters|mWoken|mHandoff))

	g, _ = m.TryLock()
	w, wk = queue(&m)
	c := newLock(&m)
	cx, cw := newCountCx()
	_, ok = c.f.Poll(cx)
	require.False(t, ok)
	g.Unlock()            // wakes w
	g2, ok := m.TryLock() // barges in
	require.True(t, ok)
	_, err = m.waitBlocking(done, w, new(waker.Signal), wk)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, m.waiters())
	require.Zero(t, m.state.Load()&mWoken, "the woken flag stayed with the goroutine that gave up")
	g2.Unlock() // wakes c
	require.Equal(t, int32(1), cw.n.Load())
	gc, ok := c.f.Poll(cx)
	require.True(t, ok)
	gc.Unlock()
}

// TestMutexRepollKeepsPlaceNewWaker: a queued future polled again with
// another Waker keeps its place in the queue and is woken through the new
// Waker.
func TestMutexRepollKeepsPlaceNewWaker(t *testing.T) {
	var m Mutex
	g, _ := m.TryLock()
	cx1, cw1 := newCountCx()
	cx2, cw2 := newCountCx()
	b, c := newLock(&m), newLock(&m)
	_, ok := b.f.Poll(cx1)
	require.False(t, ok)
	_, ok = c.f.Poll(cx1)
	require.False(t, ok)
	_, ok = b.f.Poll(cx2) // not woken: still queued, first
	require.False(t, ok)
	require.Equal(t, 2, m.waiters())
	g.Unlock()
	require.Equal(t, int32(0), cw1.n.Load())
	require.Equal(t, int32(1), cw2.n.Load())
	gb, ok := b.f.Poll(cx2)
	require.True(t, ok)
	gb.Unlock() // wakes c through cx1's Waker
	require.Equal(t, int32(1), cw1.n.Load())
	gc, ok := c.f.Poll(cx1)
	require.True(t, ok)
	gc.Unlock()
}
