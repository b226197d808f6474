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
	require.Equal(t, "Mutex.Lock", pollWaiting[syncprim.MutexGuard](t, lf))
	g.Unlock()

	var l syncprim.RwLock
	wg, ok := l.TryLock()
	require.True(t, ok)
	rf := l.RLock()
	require.Equal(t, "RwLock.RLock", pollWaiting[syncprim.ReadGuard](t, rf))
	wf := l.Lock()
	require.Equal(t, "RwLock.Lock", pollWaiting[syncprim.WriteGuard](t, wf))
	wg.Unlock()

	s := syncprim.NewSemaphore(1)
	af := s.Acquire(2)
	require.Equal(t, "Semaphore.Acquire 2", pollWaiting[error](t, af))
	pf := s.AcquirePermit(3)
	require.Equal(t, "Semaphore.Acquire 3", pollWaiting[future.Result[syncprim.Permit]](t, pf))

	var n syncprim.Notify
	nf := n.Notified()
	require.Equal(t, "Notify.Notified", pollWaiting[struct{}](t, nf))

	b := syncprim.NewBarrier(2)
	bf := b.Wait()
	require.Equal(t, "Barrier.Wait", pollWaiting[syncprim.BarrierResult](t, bf))

	var c syncprim.OnceCell[int]
	never := future.PollFn(func(*future.Context) (future.Result[int], bool) { return future.Result[int]{}, false })
	first := c.GetOrInit(func() future.Future[future.Result[int]] { return never })
	second := c.GetOrInit(func() future.Future[future.Result[int]] { return never })
	cx := future.NewContext(waker.Noop())
	_, ok = first.Poll(cx) // the initializer, pending in never
	require.False(t, ok)
	require.Equal(t, "OnceCell.Init", pollWaiting[future.Result[int]](t, second))
	future.Cancel(&first)
}
