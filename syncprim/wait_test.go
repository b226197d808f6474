package syncprim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
	"github.com/blitz-go/blitz/waker"
)

// pollWaiting polls f once with a Context that keeps a WaitSlot, as a
// task's poll does, expects it pending, and returns the wait it recorded;
// it then cancels f.
func pollWaiting[T any](t *testing.T, f future.Future[T]) string {
	t.Helper()
	var slot future.WaitSlot
	cx := future.NewContext(waker.Noop())
	cx.SetWaitSlot(&slot, 7)
	_, ok := f.Poll(cx)
	require.False(t, ok, "the future completed: nothing to wait for")
	w := slot.Load()
	require.Equal(t, uint8(7), w.Seq(), "recorded by this poll")
	future.Cancel(f)
	return w.String()
}

// TestPendingRecordsWait: every waiting future of the package records
// what it waits on when it returns not-ready, for a task dump.
func TestPendingRecordsWait(t *testing.T) {
	var m syncprim.Mutex
	g, ok := m.TryLock()
	require.True(t, ok)
	lf := m.Lock()
	require.Regexp(t, `^Mutex.Lock \d+$`, pollWaiting[syncprim.MutexGuard](t, lf))
	g.Unlock()

	var l syncprim.RwLock
	wg, ok := l.TryLock()
	require.True(t, ok)
	rf := l.RLock()
	require.Regexp(t, `^RwLock.RLock \d+$`, pollWaiting[syncprim.ReadGuard](t, rf))
	wf := l.Lock()
	require.Regexp(t, `^RwLock.Lock \d+$`, pollWaiting[syncprim.WriteGuard](t, wf))
	wg.Unlock()

	s := syncprim.NewSemaphore(1)
	af := s.Acquire(2)
	require.Regexp(t, `^Semaphore.Acquire \d+ \(2 permits\)$`, pollWaiting[error](t, af))
	pf := s.AcquirePermit(3)
	require.Regexp(t, `^Semaphore.Acquire \d+ \(3 permits\)$`, pollWaiting[future.Result[syncprim.Permit]](t, pf))

	var n syncprim.Notify
	nf := n.Notified()
	require.Regexp(t, `^Notify.Notified \d+$`, pollWaiting[struct{}](t, nf))

	b := syncprim.NewBarrier(2)
	bf := b.Wait()
	require.Regexp(t, `^Barrier.Wait \d+$`, pollWaiting[syncprim.BarrierResult](t, bf))

	var c syncprim.OnceCell[int]
	never := future.PollFn(func(*future.Context) (future.Result[int], bool) { return future.Result[int]{}, false })
	first := c.GetOrInit(func() future.Future[future.Result[int]] { return never })
	second := c.GetOrInit(func() future.Future[future.Result[int]] { return never })
	cx := future.NewContext(waker.Noop())
	_, ok = first.Poll(cx) // the initializer, pending in never
	require.False(t, ok)
	require.Regexp(t, `^OnceCell.Init \d+$`, pollWaiting[future.Result[int]](t, second))
	future.Cancel(&first)
}

// lockedBy acquires f's lock in a poll of task id, as a task would.
func lockedBy[T any](t *testing.T, id uint64, f future.Future[T]) T {
	t.Helper()
	cx := future.NewContext(waker.Noop())
	cx.SetTaskID(id)
	v, ok := f.Poll(cx)
	require.True(t, ok)
	return v
}

// waitOf polls f once in a poll of task id, expecting it pending, and
// returns the wait it recorded.
func waitOf[T any](t *testing.T, id uint64, f future.Future[T]) future.Wait {
	t.Helper()
	var slot future.WaitSlot
	cx := future.NewContext(waker.Noop())
	cx.SetWaitSlot(&slot, 1)
	cx.SetTaskID(id)
	_, ok := f.Poll(cx)
	require.False(t, ok)
	return slot.Load()
}

// TestLockWaitsNameTheLockAndItsHolder: a task waiting for a lock records
// which lock (a number, the same for every waiter of one lock, another for
// another lock), and the wait tells which task holds it: the last task to
// lock a mutex while it is locked, the writer of an RwLock; none once
// unlocked, or when a goroutine holds it.
func TestLockWaitsNameTheLockAndItsHolder(t *testing.T) {
	var m1, m2 syncprim.Mutex
	g1 := lockedBy(t, 41, m1.Lock())
	g2 := lockedBy(t, 42, m2.Lock())
	w1, w2 := m1.Lock(), m2.Lock()
	a, b := waitOf(t, 42, w1), waitOf(t, 41, w2) // the two-mutex deadlock
	require.NotEqual(t, a.Object(), b.Object(), "two mutexes, one number")
	require.Equal(t, uint64(41), a.Holder())
	require.Equal(t, uint64(42), b.Holder())
	w3 := m1.Lock()
	require.Equal(t, a.Object(), waitOf(t, 43, w3).Object(), "one mutex, one number")
	future.Cancel(w3)
	future.Cancel(w1)
	future.Cancel(w2)
	g1.Unlock()
	require.Zero(t, a.Holder(), "unlocked")
	g2.Unlock()
	g, err := m2.LockBlocking(t.Context())
	require.NoError(t, err)
	require.Zero(t, b.Holder(), "held by a goroutine")
	g.Unlock()

	var l syncprim.RwLock
	wg := lockedBy(t, 7, l.Lock())
	rw := l.RLock()
	r := waitOf(t, 8, rw)
	require.Equal(t, uint64(7), r.Holder(), "the writer holds it")
	future.Cancel(rw)
	wg.Unlock()
	require.Zero(t, r.Holder(), "no writer")
}
