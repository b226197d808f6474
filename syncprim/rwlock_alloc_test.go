package syncprim

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

func TestRwLockAllocs(t *testing.T) {
	if bnRace {
		t.Skip("sync.Pool drops items under -race, and every read guard takes a pooled token")
	}
	var l RwLock
	cx := future.NewContext(waker.Noop())
	rh, wh := new(rlockHolder), new(wlockHolder)
	ctx := context.Background()
	assertNoAllocs(t, "TryRLock/TryLock+Unlock", func() {
		if g, ok := l.TryRLock(); ok {
			g.Unlock()
		}
		if g, ok := l.TryLock(); ok {
			g.Unlock()
		}
	})
	assertNoAllocs(t, "RLock/Lock poll+Unlock", func() {
		rh.f = *l.RLock()
		if g, ok := rh.f.Poll(cx); ok {
			g.Unlock()
		}
		wh.f = *l.Lock()
		if g, ok := wh.f.Poll(cx); ok {
			g.Downgrade().Unlock()
		}
	})
	assertNoAllocs(t, "blocking+Unlock", func() {
		if g, err := l.RLockBlocking(ctx); err == nil {
			g.Unlock()
		}
		if g, err := l.LockBlocking(ctx); err == nil {
			g.Unlock()
		}
	})
}
