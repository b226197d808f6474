package syncprim_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/syncprim"
	"github.com/blitz-go/blitz/waker"
)

// TestSemaphoreWaitsNameTheSemaphoreAndThePermits: a task waiting in
// Acquire or AcquirePermit records which semaphore (a number, one per
// semaphore, another for another) and how many permits it asks for, and
// the wait reads "Semaphore.Acquire N (K permits)". A semaphore has no
// holder.
func TestSemaphoreWaitsNameTheSemaphoreAndThePermits(t *testing.T) {
	s1, s2 := syncprim.NewSemaphore(0), syncprim.NewSemaphore(0)
	f1, f2 := s1.Acquire(2), s2.Acquire(1)
	f3 := s1.AcquirePermit(3)
	big := s2.AcquirePermit(1 << 20)
	a, b := waitOf(t, 1, f1), waitOf(t, 2, f2)
	c, d := waitOf(t, 3, f3), waitOf(t, 4, big)
	for _, w := range []future.Wait{a, b, c, d} {
		require.Equal(t, future.WaitCounted, w.Kind().Object())
		require.Zero(t, w.Holder(), "no holder")
	}
	n1, k1 := a.Counted()
	n2, k2 := b.Counted()
	n3, k3 := c.Counted()
	n4, k4 := d.Counted()
	require.NotZero(t, n1)
	require.NotEqual(t, n1, n2, "two semaphores, one number")
	require.Equal(t, n1, n3, "one semaphore, two numbers")
	require.Equal(t, n2, n4, "one semaphore, two numbers")
	require.Equal(t, []uint64{2, 1, 3, future.MaxWaitCount}, []uint64{k1, k2, k3, k4})
	require.Equal(t, fmt.Sprintf("Semaphore.Acquire %d (2 permits)", n1), a.String())
	require.Equal(t, fmt.Sprintf("Semaphore.Acquire %d (1 permit)", n2), b.String())
	require.Equal(t, fmt.Sprintf("Semaphore.Acquire %d (3 permits)", n1), c.String())
	require.Equal(t, fmt.Sprintf("Semaphore.Acquire %d (65535+ permits)", n2), d.String())
	for _, f := range []future.Canceler{f1, f2, f3, big} {
		f.Cancel()
	}
}

// TestBarrierNotifyOnceCellWaitsNameTheirObject: a task waiting at a
// Barrier, a Notify or a OnceCell records which one (a number, the same
// for every waiter of one, another for another, and never a number of
// another primitive), and the wait reads "Kind.Method N".
func TestBarrierNotifyOnceCellWaitsNameTheirObject(t *testing.T) {
	b1, b2 := syncprim.NewBarrier(3), syncprim.NewBarrier(3)
	bw1, bw1b, bw2 := b1.Wait(), b1.Wait(), b2.Wait()
	var n1, n2 syncprim.Notify
	nw1, nw1b, nw2 := n1.Notified(), n1.Notified(), n2.Notified()
	var c1, c2 syncprim.OnceCell[int]
	cw1, cw1b, cw2 := initWaiter(t, &c1), initWaiter(t, &c1), initWaiter(t, &c2)

	type pair struct {
		kind       string
		one, again future.Wait // two waits on one object
		other      future.Wait // on another object of the kind
	}
	pairs := []pair{
		{"Barrier.Wait", waitOf(t, 1, bw1), waitOf(t, 2, bw1b), waitOf(t, 3, bw2)},
		{"Notify.Notified", waitOf(t, 4, nw1), waitOf(t, 5, nw1b), waitOf(t, 6, nw2)},
		{"OnceCell.Init", waitOf(t, 7, cw1.f), waitOf(t, 8, cw1b.f), waitOf(t, 9, cw2.f)},
	}
	var seen []uint64
	for _, p := range pairs {
		require.Equal(t, future.WaitNumber, p.one.Kind().Object(), p.kind)
		require.NotZero(t, p.one.Object(), p.kind)
		require.Equal(t, p.one.Object(), p.again.Object(), "%s: one object, one number", p.kind)
		require.NotEqual(t, p.one.Object(), p.other.Object(), "%s: two objects, one number", p.kind)
		require.Equal(t, fmt.Sprintf("%s %d", p.kind, p.one.Object()), p.one.String())
		require.Equal(t, fmt.Sprintf("%s %d", p.kind, p.other.Object()), p.other.String())
		seen = append(seen, p.one.Object(), p.other.Object())
	}
	slices.Sort(seen)
	require.Len(t, slices.Compact(seen), 6, "no two primitives share a number")

	for _, f := range []future.Canceler{bw1, bw1b, bw2, nw1, nw1b, nw2} {
		f.Cancel()
	}
	for _, w := range []*cellWaiter{cw1, cw1b, cw2} {
		w.cancel()
	}
}

// cellWaiter is a GetOrInit future queued behind the owner of a cell's
// initialization, which never finishes until cancelled.
type cellWaiter struct {
	owner, f *syncprim.InitFuture[int]
}

// initWaiter starts an initialization of c that never ends, if none runs,
// and returns a future that will wait for it.
func initWaiter(t *testing.T, c *syncprim.OnceCell[int]) *cellWaiter {
	t.Helper()
	never := func() future.Future[future.Result[int]] {
		return future.PollFn(func(*future.Context) (future.Result[int], bool) { return future.Result[int]{}, false })
	}
	w := &cellWaiter{f: c.GetOrInit(never)}
	owner := c.GetOrInit(never)
	if _, ok := owner.Poll(future.NewContext(waker.Noop())); ok {
		t.Fatal("the initialization completed")
	}
	w.owner = owner // the owner if it took the right, else a waiter too
	return w
}

// cancel cancels both futures of w.
func (w *cellWaiter) cancel() {
	w.f.Cancel()
	w.owner.Cancel()
}

// waitTestInit is the wait of the init future of
// TestOnceCellOwnerShowsItsInitsWait.
var waitTestInit = future.NewWaitKind("TestInit.Load", future.WaitNumber)

// TestOnceCellOwnerShowsItsInitsWait: the task that initializes a cell
// waits in its init future, and shows that future's wait, not
// "OnceCell.Init".
func TestOnceCellOwnerShowsItsInitsWait(t *testing.T) {
	var c syncprim.OnceCell[int]
	f := c.GetOrInit(func() future.Future[future.Result[int]] {
		return future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
			cx.Waiting(waitTestInit, 42)
			return future.Result[int]{}, false
		})
	})
	require.Equal(t, "TestInit.Load 42", waitOf(t, 1, f).String())
	f.Cancel()
}

// TestTaskDumpNamesTheSemaphore: tasks of a scheduler waiting on two
// semaphores show, in the scheduler's snapshot of its tasks, which
// semaphore each waits on and how many permits it asks for.
func TestTaskDumpNamesTheSemaphore(t *testing.T) {
	sch, err := scheduler.New(scheduler.Config{Workers: 1})
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sch.Shutdown(ctx))
	}()
	s1, s2 := syncprim.NewSemaphore(0), syncprim.NewSemaphore(0)
	hs := []scheduler.JoinHandle[error]{
		scheduler.Spawn[error](sch, nil, s1.Acquire(2)),
		scheduler.Spawn[error](sch, nil, s1.Acquire(1)),
		scheduler.Spawn[error](sch, nil, s2.Acquire(4)),
	}
	var waits []future.Wait
	require.Eventually(t, func() bool {
		tasks, _ := sch.Tasks()
		waits = waits[:0]
		for _, ti := range tasks {
			if ti.State == scheduler.TaskIdle && ti.Wait != 0 {
				waits = append(waits, ti.Wait)
			}
		}
		return len(waits) == 3
	}, 10*time.Second, time.Millisecond)
	byCount := map[uint64]future.Wait{}
	for _, w := range waits {
		_, k := w.Counted()
		byCount[k] = w
	}
	n1, _ := byCount[1].Counted()
	n2, _ := byCount[4].Counted()
	require.NotEqual(t, n1, n2, "two semaphores, one number")
	require.Equal(t, fmt.Sprintf("Semaphore.Acquire %d (1 permit)", n1), byCount[1].String())
	require.Equal(t, fmt.Sprintf("Semaphore.Acquire %d (2 permits)", n1), byCount[2].String())
	require.Equal(t, fmt.Sprintf("Semaphore.Acquire %d (4 permits)", n2), byCount[4].String())

	s1.Close()
	s2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, h := range hs {
		r, err := h.Wait(ctx)
		require.NoError(t, err)
		require.ErrorIs(t, r, syncprim.ErrClosed)
	}
}

// waitTestBare is a WaitCounted kind without a unit, for
// TestWaitCountedPacking.
var waitTestBare = future.NewCountedWaitKind("TestCell.Take", "", "")

// TestWaitCountedPacking: a WaitCounted object keeps 32 bits of the
// number (cut to them) and 16 of the count (kept at MaxWaitCount, read
// "65535+"), and orders by number, then count.
func TestWaitCountedPacking(t *testing.T) {
	for _, c := range []struct {
		num, count         uint64
		wantNum, wantCount uint64
		str                string
	}{
		{5, 2, 5, 2, "Semaphore.Acquire 5 (2 permits)"},
		{5, 1, 5, 1, "Semaphore.Acquire 5 (1 permit)"},
		{future.MaxWaitCountedNumber, future.MaxWaitCount - 1, future.MaxWaitCountedNumber, 65534, "Semaphore.Acquire 4294967295 (65534 permits)"},
		{1<<32 + 7, 1 << 40, 7, future.MaxWaitCount, "Semaphore.Acquire 7 (65535+ permits)"},
	} {
		w := future.MakeWait(waitOfAcquire(t), 0, future.WaitCountedOf(c.num, c.count))
		num, count := w.Counted()
		require.Equal(t, [2]uint64{c.wantNum, c.wantCount}, [2]uint64{num, count}, c.str)
		require.Equal(t, c.str, w.String())
	}
	require.Equal(t, "TestCell.Take 5 (2)", future.MakeWait(waitTestBare, 0, future.WaitCountedOf(5, 2)).String())
	require.Less(t, future.WaitCountedOf(5, future.MaxWaitCount), future.WaitCountedOf(6, 1), "by number first")
	require.Less(t, future.WaitCountedOf(5, 1), future.WaitCountedOf(5, 2), "then by count")
}

// waitOfAcquire returns the kind of a Semaphore.Acquire wait, as a task
// records it.
func waitOfAcquire(t *testing.T) future.WaitKind {
	t.Helper()
	s := syncprim.NewSemaphore(0)
	f := s.Acquire(1)
	defer f.Cancel()
	return waitOf(t, 1, f).Kind()
}
