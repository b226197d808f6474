package syncprim

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// assertNoAllocs fails if f allocates.
func assertNoAllocs(t *testing.T, name string, f func()) {
	t.Helper()
	if n := testing.AllocsPerRun(1000, f); n != 0 {
		t.Errorf("%s: %v allocs per run, want 0", name, n)
	}
}

func TestSemaphoreAllocs(t *testing.T) {
	s := NewSemaphore(2)
	cx := future.NewContext(waker.Noop())
	h := new(acqHolder)
	ctx := context.Background()
	assertNoAllocs(t, "TryAcquire+Release", func() {
		if s.TryAcquire(2) {
			s.Release(2)
		}
	})
	assertNoAllocs(t, "Acquire poll+Release", func() {
		h.f = *s.Acquire(1)
		if err, ok := h.f.Poll(cx); ok && err == nil {
			s.Release(1)
		}
	})
	assertNoAllocs(t, "AcquireBlocking+Release", func() {
		if s.AcquireBlocking(ctx, 1) == nil {
			s.Release(1)
		}
	})
	// A future that waits allocates nothing either: its waiter is inside.
	w := new(acqHolder)
	assertNoAllocs(t, "Acquire wait+Release", func() {
		_ = s.TryAcquire(2)
		w.f = *s.Acquire(1)
		w.f.Poll(cx)
		s.Release(2)
		w.f.Poll(cx)
		s.Release(1)
	})
}
