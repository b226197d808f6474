package syncprim

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

func TestMutexAllocs(t *testing.T) {
	var m Mutex
	cx := future.NewContext(waker.Noop())
	h := new(lockHolder)
	ctx := context.Background()
	assertNoAllocs(t, "TryLock+Unlock", func() {
		if g, ok := m.TryLock(); ok {
			g.Unlock()
		}
	})
	assertNoAllocs(t, "Lock poll+Unlock", func() {
		h.f = *m.Lock()
		if g, ok := h.f.Poll(cx); ok {
			g.Unlock()
		}
	})
	assertNoAllocs(t, "LockBlocking+Unlock", func() {
		if g, err := m.LockBlocking(ctx); err == nil {
			g.Unlock()
		}
	})
}
