package syncprim

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// slotContext returns a Context whose polls record their waits in a
// WaitSlot, as a task's do, and the slot.
func slotContext() (*future.Context, *future.WaitSlot) {
	slot := new(future.WaitSlot)
	cx := future.NewContext(waker.Noop())
	cx.SetWaitSlot(slot, 1)
	return cx, slot
}

// pend polls f once in a task-like poll, expecting it pending, and
// cancels it.
func pend[T any](t *testing.T, f interface {
	future.Future[T]
	future.Canceler
}) {
	t.Helper()
	cx, _ := slotContext()
	if _, ok := f.Poll(cx); ok {
		t.Fatal("the future completed: nothing to wait for")
	}
	f.Cancel()
}

// TestUncontendedWaitsTakeNoNumber: a primitive takes its number for task
// dumps only when a task waits on it; the paths that do not wait record
// no wait and take no number.
func TestUncontendedWaitsTakeNoNumber(t *testing.T) {
	cx, slot := slotContext()
	ctx := context.Background()

	s := NewSemaphore(4)
	if err, ok := s.Acquire(1).Poll(cx); !ok || err != nil {
		t.Fatal("Acquire of a free permit waited")
	}
	r, ok := s.AcquirePermit(1).Poll(cx)
	if !ok || r.Err != nil {
		t.Fatal("AcquirePermit of a free permit waited")
	}
	r.Value.Release()
	if !s.TryAcquire(1) || s.AcquireBlocking(ctx, 1) != nil {
		t.Fatal("TryAcquire or AcquireBlocking of a free permit failed")
	}
	s.Release(3)

	b := NewBarrier(1)
	if _, ok := b.Wait().Poll(cx); !ok {
		t.Fatal("the leader of a round of one waited")
	}

	var c OnceCell[int]
	if r, ok := c.GetOrInit(func() future.Future[future.Result[int]] { return future.Ready(future.Ok(1)) }).Poll(cx); !ok || r.Value != 1 {
		t.Fatal("GetOrInit of a ready init waited")
	}
	if r, ok := c.GetOrInit(func() future.Future[future.Result[int]] { return nil }).Poll(cx); !ok || r.Value != 1 {
		t.Fatal("GetOrInit of an initialized cell waited")
	}

	if w := slot.Load(); w != 0 {
		t.Errorf("recorded %q, want no wait", w)
	}
	if s.num.Load() != 0 || b.num.Load() != 0 || c.num.Load() != 0 {
		t.Errorf("numbers %d, %d, %d taken without a wait, want 0", s.num.Load(), b.num.Load(), c.num.Load())
	}

	// The first wait takes the number, the next ones keep it.
	pend[error](t, s.Acquire(5))
	n := s.num.Load()
	pend[error](t, s.Acquire(5))
	if n == 0 || s.num.Load() != n {
		t.Errorf("semaphore number %d then %d, want one nonzero number", n, s.num.Load())
	}
}

// TestSemaphoreWaitRecordingAllocs: recording a wait, number and permits,
// allocates nothing, and neither does the uncontended path of a task that
// keeps a WaitSlot.
func TestSemaphoreWaitRecordingAllocs(t *testing.T) {
	s := NewSemaphore(2)
	cx, slot := slotContext()
	h := new(acqHolder)
	assertNoAllocs(t, "Acquire poll+Release, with a WaitSlot", func() {
		h.f = *s.Acquire(1)
		if err, ok := h.f.Poll(cx); ok && err == nil {
			s.Release(1)
		}
	})
	if s.num.Load() != 0 {
		t.Error("an uncontended Acquire took a number")
	}
	w := new(acqHolder)
	p := new(PermitFuture)
	assertNoAllocs(t, "Acquire and AcquirePermit wait+Release, with a WaitSlot", func() {
		_ = s.TryAcquire(2)
		w.f = *s.Acquire(1)
		w.f.Poll(cx)
		*p = *s.AcquirePermit(1)
		p.Poll(cx)
		s.Release(2)
		w.f.Poll(cx)
		r, _ := p.Poll(cx)
		r.Value.Release()
		s.Release(1)
	})
	if _, n := slot.Load().Counted(); n != 1 {
		t.Errorf("recorded %q, want a wait for 1 permit", slot.Load())
	}
}

// TestWaitNumbersKeepNothingAlive: taking a number for task dumps keeps
// no primitive alive. A Semaphore, a Barrier, a OnceCell and a Notify
// register nothing; a Mutex registers its holder reader, whose entry
// leaves with the Mutex.
func TestWaitNumbersKeepNothingAlive(t *testing.T) {
	gone := make(chan string, 5)
	var mutexID uint64
	func() {
		s, b, c, n, m := NewSemaphore(0), NewBarrier(2), new(OnceCell[int]), new(Notify), new(Mutex)
		pend[error](t, s.Acquire(1))
		pend[BarrierResult](t, b.Wait())
		never := func() future.Future[future.Result[int]] {
			return future.PollFn(func(*future.Context) (future.Result[int], bool) { return future.Result[int]{}, false })
		}
		owner := c.GetOrInit(never)
		owner.Poll(future.NewContext(waker.Noop()))
		pend[future.Result[int]](t, c.GetOrInit(never))
		owner.Cancel()
		pend[struct{}](t, n.Notified())
		g, _ := m.TryLock()
		pend[MutexGuard](t, m.Lock())
		g.Unlock()

		for name, num := range map[string]uint64{"Semaphore": s.num.Load(), "Barrier": b.num.Load(), "OnceCell": c.num.Load(), "Notify": n.num.Load()} {
			if num == 0 {
				t.Fatalf("%s: no number taken", name)
			}
			if _, ok := locks.Load(num); ok {
				t.Errorf("%s: registered", name)
			}
		}
		mutexID = m.ident.id.Load()
		if _, ok := locks.Load(mutexID); !ok {
			t.Fatal("Mutex: not registered")
		}
		runtime.AddCleanup(s, func(name string) { gone <- name }, "Semaphore")
		runtime.AddCleanup(b, func(name string) { gone <- name }, "Barrier")
		runtime.AddCleanup(c, func(name string) { gone <- name }, "OnceCell")
		runtime.AddCleanup(n, func(name string) { gone <- name }, "Notify")
		runtime.AddCleanup(m, func(name string) { gone <- name }, "Mutex")
	}()

	left := map[string]bool{"Semaphore": true, "Barrier": true, "OnceCell": true, "Notify": true, "Mutex": true}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, registered := locks.Load(mutexID)
		if len(left) == 0 && !registered {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still alive after 10s: %v; mutex entry left: %v", left, registered)
		}
		runtime.GC()
		select {
		case name := <-gone:
			delete(left, name)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
