package syncprim

import (
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// BenchmarkSemaphoreUncontended: one task's acquire+release of a free
// permit, the fast path a task dump's wait must not slow down.
func BenchmarkSemaphoreUncontended(b *testing.B) {
	s := NewSemaphore(1)
	var slot future.WaitSlot
	cx := future.NewContext(waker.Noop())
	cx.SetWaitSlot(&slot, 1)
	b.Run("Acquire", func(b *testing.B) {
		h := new(acqHolder)
		b.ReportAllocs()
		for b.Loop() {
			h.f = *s.Acquire(1)
			if err, ok := h.f.Poll(cx); !ok || err != nil {
				b.Fatal("the free permit was not taken")
			}
			s.Release(1)
		}
	})
	b.Run("AcquirePermit", func(b *testing.B) {
		var f PermitFuture
		b.ReportAllocs()
		for b.Loop() {
			f = *s.AcquirePermit(1)
			r, ok := f.Poll(cx)
			if !ok || r.Err != nil {
				b.Fatal("the free permit was not taken")
			}
			r.Value.Release()
		}
	})
}
