package syncprim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireReleasedPanic runs fn and requires that it panics with a value that
// errors.Is reports as ErrGuardReleased.
func requireReleasedPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	v := bnPanics(fn)
	err, _ := v.(error)
	if !errors.Is(err, ErrGuardReleased) {
		t.Fatalf("%s: panic value %v, want ErrGuardReleased", what, v)
	}
}

// TestMutexStaleGuardUnlockPanics: unlocking through a copy of a guard that
// was already unlocked, while another holder has the mutex, panics with
// ErrGuardReleased and leaves the mutex held by that holder (a third locker
// stays out), whether or not anyone is queued; a second Unlock of the same
// guard panics the same way.
func TestMutexStaleGuardUnlockPanics(t *testing.T) {
	var m Mutex
	g1, ok := m.TryLock()
	require.True(t, ok)
	stale := g1
	g1.Unlock()
	requireReleasedPanic(t, "double unlock of a free mutex", func() { g1.Unlock() })

	g2, err := m.LockBlocking(context.Background())
	require.NoError(t, err)
	requireReleasedPanic(t, "stale unlock, nobody queued", func() { stale.Unlock() })
	_, ok = m.TryLock()
	require.False(t, ok, "a third locker got in after the stale unlock")

	// With a locker queued: the stale unlock must not hand it the lock.
	got := make(chan MutexGuard)
	go func() {
		g, err := m.LockBlocking(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- g
	}()
	require.True(t, waitUntil(t, "one queued locker", func() bool { return m.waiters() == 1 }))
	requireReleasedPanic(t, "stale unlock, one queued", func() { stale.Unlock() })
	require.Equal(t, 1, m.waiters(), "the stale unlock handed the lock on")
	select {
	case <-got:
		t.Fatal("the queued locker got in while g2 holds the mutex")
	case <-time.After(10 * time.Millisecond):
	}
	g2.Unlock()
	g3 := <-got
	requireReleasedPanic(t, "g2 unlocked twice", func() { g2.Unlock() })
	g3.Unlock()

	// Guards of the future tier, uncontended and handed off.
	cx, _ := newCountCx()
	a := newLock(&m)
	ga, ok := a.f.Poll(cx)
	require.True(t, ok)
	b := newLock(&m)
	_, ok = b.f.Poll(cx)
	require.False(t, ok)
	ga.Unlock() // hand-off to b
	requireReleasedPanic(t, "stale future guard after a hand-off", func() { ga.Unlock() })
	gb, ok := b.f.Poll(cx)
	require.True(t, ok)
	requireReleasedPanic(t, "stale future guard while b holds", func() { ga.Unlock() })
	_, ok = m.TryLock()
	require.False(t, ok)
	gb.Unlock()
	g, ok := m.TryLock()
	require.True(t, ok)
	g.Unlock()
	require.PanicsWithValue(t, ErrNotLocked, func() { MutexGuard{}.Unlock() })
}

// TestMutexStaleGuardsUnderContention: goroutines lock and unlock a Mutex
// while another goroutine keeps unlocking through guards it already
// unlocked; every stale unlock panics with ErrGuardReleased and nobody is
// ever inside together with another.
func TestMutexStaleGuardsUnderContention(t *testing.T) {
	iters := 20_000
	if testing.Short() {
		iters = 2_000
	}
	var m Mutex
	var inside atomic.Int32
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range iters {
				g, err := m.LockBlocking(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					t.Error("two holders inside the mutex")
				}
				inside.Add(-1)
				g.Unlock()
			}
		})
	}
	wg.Go(func() {
		for range iters / 10 {
			g, err := m.LockBlocking(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			g.Unlock()
			if v := bnPanics(g.Unlock); !errors.Is(asError(v), ErrGuardReleased) {
				t.Errorf("stale unlock: panic value %v", v)
				return
			}
		}
	})
	wg.Wait()
	g, ok := m.TryLock()
	require.True(t, ok, "the mutex was left locked")
	g.Unlock()
}

// asError returns v as an error, or nil.
func asError(v any) error {
	err, _ := v.(error)
	return err
}

// TestRwLockStaleGuardsPanic: a write guard unlocked or downgraded twice,
// or through a stale copy while another holder has the lock, panics with
// ErrGuardReleased; a read guard released twice while another reader holds
// the lock panics too and does not drop that reader's count (a writer stays
// out until it unlocks); the lock's state is intact afterwards.
func TestRwLockStaleGuardsPanic(t *testing.T) {
	var l RwLock
	ctx := context.Background()

	// Write guards.
	w1, ok := l.TryLock()
	require.True(t, ok)
	staleW := w1
	w1.Unlock()
	requireReleasedPanic(t, "write guard unlocked twice", func() { w1.Unlock() })
	requireReleasedPanic(t, "downgrade of an unlocked write guard", func() { staleW.Downgrade() })
	w2, err := l.LockBlocking(ctx)
	require.NoError(t, err)
	requireReleasedPanic(t, "stale write unlock while another writer holds", func() { staleW.Unlock() })
	_, ok = l.TryRLock()
	require.False(t, ok, "a reader got in after the stale write unlock")
	_, ok = l.TryLock()
	require.False(t, ok, "a writer got in after the stale write unlock")
	r := w2.Downgrade()
	requireReleasedPanic(t, "write guard unlocked after its downgrade", func() { w2.Unlock() })
	requireReleasedPanic(t, "stale write unlock while a reader holds", func() { staleW.Unlock() })
	_, ok = l.TryLock()
	require.False(t, ok, "a writer got in while the downgraded reader holds")
	r.Unlock()

	// Read guards.
	ra, ok := l.TryRLock()
	require.True(t, ok)
	rb, err := l.RLockBlocking(ctx)
	require.NoError(t, err)
	ra.Unlock()
	requireReleasedPanic(t, "read guard unlocked twice while another reader holds", func() { ra.Unlock() })
	_, ok = l.TryLock()
	require.False(t, ok, "a writer got in while rb still reads")
	w3, ok := func() (WriteGuard, bool) {
		cx, _ := newCountCx()
		h := newWLock(&l)
		if _, ok := h.f.Poll(cx); ok {
			return WriteGuard{}, false
		}
		requireReleasedPanic(t, "stale read unlock with a writer queued", func() { ra.Unlock() })
		require.Equal(t, 1, l.waiters(), "the stale read unlock admitted the writer")
		rb.Unlock()
		return h.f.Poll(cx)
	}()
	require.True(t, ok, "the writer did not get in after the last reader left")
	requireReleasedPanic(t, "stale read unlock while a writer holds", func() { ra.Unlock() })
	requireReleasedPanic(t, "read guard unlocked twice while a writer holds", func() { rb.Unlock() })
	_, ok = l.TryRLock()
	require.False(t, ok, "a reader got in while the writer holds")
	w3.Unlock()

	w, ok := l.TryLock()
	require.True(t, ok, "the lock was left held")
	w.Unlock()
	require.PanicsWithValue(t, ErrNotLocked, func() { ReadGuard{}.Unlock() })
	require.PanicsWithValue(t, ErrNotLocked, func() { WriteGuard{}.Unlock() })
	require.PanicsWithValue(t, ErrNotLocked, func() { WriteGuard{}.Downgrade() })
}

// TestRwLockStaleReadGuardsUnderContention: readers overlap, and each
// sometimes unlocks its read guard a second time while the others still
// read; every second unlock panics with ErrGuardReleased, and a writer
// never gets in while a reader is inside.
func TestRwLockStaleReadGuardsUnderContention(t *testing.T) {
	iters := 20_000
	if testing.Short() {
		iters = 2_000
	}
	var l RwLock
	var readers, writers atomic.Int32
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			for k := range iters {
				g, err := l.RLockBlocking(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				readers.Add(1)
				if writers.Load() != 0 {
					t.Error("a reader inside with a writer")
				}
				readers.Add(-1)
				g.Unlock()
				if k%7 == i {
					if v := bnPanics(g.Unlock); !errors.Is(asError(v), ErrGuardReleased) {
						t.Errorf("second read unlock: panic value %v", v)
						return
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range iters / 10 {
			g, err := l.LockBlocking(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			writers.Add(1)
			if readers.Load() != 0 {
				t.Error("a writer inside with a reader")
			}
			writers.Add(-1)
			g.Unlock()
		}
	})
	wg.Wait()
	g, ok := l.TryLock()
	require.True(t, ok, "the lock was left held")
	g.Unlock()
}

// TestSemaphorePermitReleasedTwicePanics: a Permit released a second time,
// through a copy or not, while others hold the semaphore's permits, panics
// with ErrGuardReleased and adds no permit; through every tier.
func TestSemaphorePermitReleasedTwicePanics(t *testing.T) {
	s := NewSemaphore(3)
	p, ok := s.TryAcquirePermit(2)
	require.True(t, ok)
	require.Equal(t, 2, p.N())
	stale := p
	p.Release()
	require.Equal(t, 3, s.Available())
	requireReleasedPanic(t, "permit released twice", func() { p.Release() })
	require.Equal(t, 3, s.Available(), "the second release added permits")

	q, err := s.AcquirePermitBlocking(context.Background(), 3)
	require.NoError(t, err)
	requireReleasedPanic(t, "stale permit while q holds every permit", func() { stale.Release() })
	require.Equal(t, 0, s.Available())
	require.False(t, s.TryAcquire(1), "a stale release let an acquirer in")

	// The future tier, with a hand-off: q's release goes to the queued future.
	cx, _ := newCountCx()
	h := &struct{ f PermitFuture }{}
	h.f = *s.AcquirePermit(2)
	_, ok = h.f.Poll(cx)
	require.False(t, ok)
	q.Release()
	requireReleasedPanic(t, "q released twice with a waiter served", func() { q.Release() })
	res, ok := h.f.Poll(cx)
	require.True(t, ok)
	require.NoError(t, res.Err)
	require.Equal(t, 1, s.Available())
	requireReleasedPanic(t, "stale permit while the future's permit is held", func() { stale.Release() })
	require.Equal(t, 1, s.Available())
	res.Value.Release()
	require.Equal(t, 3, s.Available())

	// No permits, the zero Permit, a closed semaphore.
	z, ok := s.TryAcquirePermit(0)
	require.True(t, ok)
	z.Release()
	z.Release()
	Permit{}.Release()
	require.Equal(t, 3, s.Available())
	r, ok := s.TryAcquirePermit(1)
	require.True(t, ok)
	s.Close()
	_, err = s.AcquirePermitBlocking(context.Background(), 1)
	require.ErrorIs(t, err, ErrClosed)
	h.f = *s.AcquirePermit(1)
	res, ok = h.f.Poll(cx)
	require.True(t, ok)
	require.ErrorIs(t, res.Err, ErrClosed)
	r.Release() // works after Close
	requireReleasedPanic(t, "permit released twice after Close", func() { r.Release() })
	require.Equal(t, 3, s.Available())
	_, err = s.AcquirePermitBlocking(context.Background(), -1)
	require.ErrorIs(t, err, ErrInvalidPermits)
}

// TestSemaphoreStalePermitsUnderContention: goroutines take and return
// permits as Permits, and sometimes release one a second time; every second
// release panics with ErrGuardReleased, and the holders never exceed the
// semaphore's permits.
func TestSemaphoreStalePermitsUnderContention(t *testing.T) {
	iters := 20_000
	if testing.Short() {
		iters = 2_000
	}
	const permits = 2
	s := NewSemaphore(permits)
	var holding atomic.Int32
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for k := range iters {
				p, err := s.AcquirePermitBlocking(context.Background(), 1)
				if err != nil {
					t.Error(err)
					return
				}
				if holding.Add(1) > permits {
					t.Error("more holders than permits")
				}
				holding.Add(-1)
				p.Release()
				if k%5 == i {
					if v := bnPanics(p.Release); !errors.Is(asError(v), ErrGuardReleased) {
						t.Errorf("second release: panic value %v", v)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, permits, s.Available())
}

// TestGuardsDoNotAllocate: the guards' identities (a counter in the lock,
// a pooled token) cost no allocation in steady state.
func TestGuardsDoNotAllocate(t *testing.T) {
	if bnRace {
		t.Skip("sync.Pool drops items under -race")
	}
	var m Mutex
	var l RwLock
	s := NewSemaphore(1)
	assertNoAllocs(t, "Mutex TryLock+Unlock", func() {
		if g, ok := m.TryLock(); ok {
			g.Unlock()
		}
	})
	assertNoAllocs(t, "RwLock TryRLock+Unlock", func() {
		if g, ok := l.TryRLock(); ok {
			g.Unlock()
		}
	})
	assertNoAllocs(t, "Semaphore TryAcquirePermit+Release", func() {
		if p, ok := s.TryAcquirePermit(1); ok {
			p.Release()
		}
	})
}
