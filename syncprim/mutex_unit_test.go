package syncprim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

// lockHolder keeps a LockFuture at a fixed address.
type lockHolder struct{ f LockFuture }

func newLock(m *Mutex) *lockHolder {
	h := new(lockHolder)
	h.f = m.Lock()
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
	ga.Unlock() // hand-off to b
	require.Equal(t, int32(1), cw.n.Load())
	_, ok = m.TryLock()
	require.False(t, ok, "the lock was handed to b")
	// Cancel b after the hand-off, before its re-poll: c gets the lock.
	b.f.Cancel()
	require.Equal(t, int32(2), cw.n.Load())
	gc, ok := c.f.Poll(cx)
	require.True(t, ok)
	gc.Unlock()
	require.PanicsWithValue(t, ErrGuardReleased, func() { gc.Unlock() })
	g, ok := m.TryLock()
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

// TestMutexModel drives random sequences of TryLock, Lock (poll, cancel)
// and Unlock against refSem with one permit.
func TestMutexModel(t *testing.T) {
	rounds := 1000
	if testing.Short() {
		rounds = 200
	}
	cx, _ := newCountCx()
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 3))
		var m Mutex
		ref := &refSem{free: 1}
		type pair struct {
			h *lockHolder
			w *refW
		}
		var live []pair
		var held []MutexGuard
		for step := range 50 {
			switch op := rng.IntN(8); {
			case op < 2:
				g, ok := m.TryLock()
				require.Equal(t, ref.try(1), ok, "round %d step %d", round, step)
				if ok {
					held = append(held, g)
				}
			case op < 4:
				h, w := newLock(&m), &refW{need: 1}
				ready, _ := ref.acquire(w)
				g, ok := h.f.Poll(cx)
				require.Equal(t, ready, ok)
				if ok {
					held = append(held, g)
				} else {
					live = append(live, pair{h, w})
				}
			case op < 5 && len(held) > 0:
				held[0].Unlock()
				held = held[1:]
				ref.release(1)
			case op < 7 && len(live) > 0:
				i := rng.IntN(len(live))
				g, ok := live[i].h.f.Poll(cx)
				require.Equal(t, live[i].w.state == rwGranted, ok)
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
			require.Equal(t, len(ref.q), m.waiters())
			require.Equal(t, int64(ref.free), m.c.available(mutexBias))
		}
	}
}
