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

type rlockHolder struct{ f RLockFuture }
type wlockHolder struct{ f WLockFuture }

func newRLock(l *RwLock) *rlockHolder {
	h := new(rlockHolder)
	h.f = *l.RLock()
	return h
}

func newWLock(l *RwLock) *wlockHolder {
	h := new(wlockHolder)
	h.f = *l.Lock()
	return h
}

func TestRwLockBasics(t *testing.T) {
	var l RwLock
	r1, ok := l.TryRLock()
	require.True(t, ok)
	r2, ok := l.TryRLock()
	require.True(t, ok)
	_, ok = l.TryLock()
	require.False(t, ok)
	r1.Unlock()
	r2.Unlock()
	require.PanicsWithValue(t, ErrGuardReleased, func() { r2.Unlock() })
	require.PanicsWithValue(t, ErrNotLocked, func() { ReadGuard{}.Unlock() })
	require.PanicsWithValue(t, ErrNotLocked, func() { WriteGuard{}.Unlock() })
	require.PanicsWithValue(t, ErrNotLocked, func() { WriteGuard{}.Downgrade() })
	w, ok := l.TryLock()
	require.True(t, ok)
	_, ok = l.TryRLock()
	require.False(t, ok)
	w.Unlock()
	require.PanicsWithValue(t, ErrGuardReleased, func() { w.Unlock() })

	ctx := context.Background()
	w, err := l.LockBlocking(ctx)
	require.NoError(t, err)
	tctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	_, err = l.RLockBlocking(tctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = l.LockBlocking(tctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, l.waiters())
	r := w.Downgrade()
	r3, err := l.RLockBlocking(ctx)
	require.NoError(t, err)
	r.Unlock()
	r3.Unlock()
	w, ok = l.TryLock()
	require.True(t, ok)
	w.Unlock()
}

// TestRwLockPhases checks the FIFO phase policy step by step: readers queued
// before a writer get in before it, readers after a waiting writer wait,
// and Downgrade admits the readers at the head of the queue.
func TestRwLockPhases(t *testing.T) {
	var l RwLock
	cx, _ := newCountCx()
	w0, _ := l.TryLock()
	r1, r2 := newRLock(&l), newRLock(&l)
	w1 := newWLock(&l)
	r3 := newRLock(&l)
	for _, p := range []func() bool{
		func() bool { _, ok := r1.f.Poll(cx); return ok },
		func() bool { _, ok := r2.f.Poll(cx); return ok },
		func() bool { _, ok := w1.f.Poll(cx); return ok },
		func() bool { _, ok := r3.f.Poll(cx); return ok },
	} {
		require.False(t, p())
	}
	rd := w0.Downgrade() // r1, r2 get in; w1 waits for 3 readers; r3 behind it
	g1, ok := r1.f.Poll(cx)
	require.True(t, ok)
	g2, ok := r2.f.Poll(cx)
	require.True(t, ok)
	_, ok = w1.f.Poll(cx)
	require.False(t, ok)
	_, ok = l.TryRLock()
	require.False(t, ok, "a waiting writer holds back new readers")
	rd.Unlock()
	g1.Unlock()
	_, ok = w1.f.Poll(cx)
	require.False(t, ok)
	g2.Unlock()
	gw, ok := w1.f.Poll(cx)
	require.True(t, ok)
	_, ok = r3.f.Poll(cx)
	require.False(t, ok)
	gw.Unlock()
	g3, ok := r3.f.Poll(cx)
	require.True(t, ok)
	g3.Unlock()
	require.Equal(t, 0, l.waiters())
	w, ok := l.TryLock()
	require.True(t, ok)
	w.Unlock()
}

// TestRwLockCancel cancels a writer at the head that had gathered read
// permits: they pass to the readers behind it. And a writer handed the lock
// but cancelled before its re-poll passes it on.
func TestRwLockCancel(t *testing.T) {
	var l RwLock
	cx, _ := newCountCx()
	r, _ := l.TryRLock()
	w := newWLock(&l)
	_, ok := w.f.Poll(cx) // gathers MaxReaders-1
	require.False(t, ok)
	r2 := newRLock(&l)
	_, ok = r2.f.Poll(cx)
	require.False(t, ok)
	w.f.Cancel()
	g2, ok := r2.f.Poll(cx)
	require.True(t, ok)
	r.Unlock()
	g2.Unlock()

	w1, w2 := newWLock(&l), newWLock(&l)
	held, _ := l.TryLock()
	w1.f.Poll(cx)
	w2.f.Poll(cx)
	held.Unlock() // to w1
	w1.f.Cancel() // passes to w2
	gw, ok := w2.f.Poll(cx)
	require.True(t, ok)
	gw.Unlock()
	require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { w1.f.Poll(cx) })
	require.Equal(t, int64(MaxReaders), l.c.available(MaxReaders))
	require.Equal(t, 0, l.waiters())
}

// TestRwLockModel runs random sequences of every operation against refSem
// with MaxReaders permits (a reader needs 1, a writer all).
func TestRwLockModel(t *testing.T) {
	rounds := 1000
	if testing.Short() {
		rounds = 200
	}
	cx, _ := newCountCx()
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 5))
		var l RwLock
		ref := &refSem{free: MaxReaders}
		type pair struct {
			rh *rlockHolder
			wh *wlockHolder
			w  *refW
		}
		var live []pair
		var reads []ReadGuard
		var writes []WriteGuard
		for step := range 60 {
			switch op := rng.IntN(12); {
			case op < 1:
				g, ok := l.TryRLock()
				require.Equal(t, ref.try(1), ok, "round %d step %d", round, step)
				if ok {
					reads = append(reads, g)
				}
			case op < 2:
				g, ok := l.TryLock()
				require.Equal(t, ref.try(MaxReaders), ok, "round %d step %d", round, step)
				if ok {
					writes = append(writes, g)
				}
			case op < 4:
				p := pair{w: &refW{need: 1}}
				if op == 3 {
					p.w.need = MaxReaders
				}
				ready, _ := ref.acquire(p.w)
				var ok bool
				if p.w.need == 1 {
					p.rh = newRLock(&l)
					var g ReadGuard
					if g, ok = p.rh.f.Poll(cx); ok {
						reads = append(reads, g)
					}
				} else {
					p.wh = newWLock(&l)
					var g WriteGuard
					if g, ok = p.wh.f.Poll(cx); ok {
						writes = append(writes, g)
					}
				}
				require.Equal(t, ready, ok, "round %d step %d", round, step)
				if !ok {
					live = append(live, p)
				}
			case op < 6 && len(reads) > 0:
				reads[0].Unlock()
				reads = reads[1:]
				ref.release(1)
			case op < 7 && len(writes) > 0:
				writes[0].Unlock()
				writes = writes[1:]
				ref.release(MaxReaders)
			case op < 8 && len(writes) > 0:
				reads = append(reads, writes[0].Downgrade())
				writes = writes[1:]
				ref.release(MaxReaders - 1)
			case op < 10 && len(live) > 0:
				i := rng.IntN(len(live))
				p := live[i]
				var ok bool
				if p.rh != nil {
					var g ReadGuard
					if g, ok = p.rh.f.Poll(cx); ok {
						reads = append(reads, g)
					}
				} else {
					var g WriteGuard
					if g, ok = p.wh.f.Poll(cx); ok {
						writes = append(writes, g)
					}
				}
				require.Equal(t, p.w.state == rwGranted, ok, "round %d step %d", round, step)
				if ok {
					live = slices.Delete(live, i, i+1)
				}
			case len(live) > 0:
				i := rng.IntN(len(live))
				if p := live[i]; p.rh != nil {
					p.rh.f.Cancel()
				} else {
					p.wh.f.Cancel()
				}
				ref.cancel(live[i].w)
				live = slices.Delete(live, i, i+1)
			}
			require.LessOrEqual(t, len(writes), 1)
			require.False(t, len(writes) == 1 && len(reads) > 0)
			require.Equal(t, len(ref.q), l.waiters())
			require.Equal(t, int64(ref.free), l.c.available(MaxReaders))
		}
	}
}
