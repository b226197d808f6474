package syncprim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// The allocation tests of Barrier, Notify and OnceCell: the uncontended
// paths, a future's whole wait, and the blocking tier in steady state.

func TestNotifyDoesNotAllocate(t *testing.T) {
	var n Notify
	_, cx := bnCx()
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		n.NotifyOne()
		n.TryNotified()
		n.TryNotified()
	}))
	f := new(NotifiedFuture) // a task's state: made once
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		*f = *n.Notified()
		f.Poll(cx)
		n.NotifyOne()
		f.Poll(cx)
		*f = *n.Notified()
		f.Poll(cx)
		n.NotifyWaiters()
		f.Poll(cx)
	}))
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		n.NotifyOne()
		_ = n.NotifiedBlocking(context.Background())
	}))
}

func TestNotifyBlockingSteadyStateDoesNotAllocate(t *testing.T) {
	if bnRace {
		t.Skip("sync.Pool drops items under -race")
	}
	var ping, pong Notify
	const runs = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range runs + 1 {
			_ = ping.NotifiedBlocking(context.Background())
			pong.NotifyOne()
		}
	}()
	allocs := testing.AllocsPerRun(runs, func() {
		ping.NotifyOne()
		_ = pong.NotifiedBlocking(context.Background())
	})
	<-done
	require.Less(t, allocs, 0.05)
}

func TestBarrierDoesNotAllocate(t *testing.T) {
	b := NewBarrier(2)
	_, cx := bnCx()
	f := new(BarrierFuture) // a task's state: made once
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		*f = *b.Wait()
		f.Poll(cx)
		b.TryWait()
		f.Poll(cx)
	}))
	one := NewBarrier(1)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		_, _ = one.WaitBlocking(context.Background())
	}))
}

func TestBarrierBlockingSteadyStateDoesNotAllocate(t *testing.T) {
	if bnRace {
		t.Skip("sync.Pool drops items under -race")
	}
	b := NewBarrier(2)
	const runs = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range runs + 1 {
			_, _ = b.WaitBlocking(context.Background())
		}
	}()
	allocs := testing.AllocsPerRun(runs, func() {
		_, _ = b.WaitBlocking(context.Background())
	})
	<-done
	require.Less(t, allocs, 0.05)
}

func TestOnceCellGetDoesNotAllocate(t *testing.T) {
	var c OnceCell[string]
	require.NoError(t, c.Set("v"))
	_, cx := bnCx()
	f := new(InitFuture[string]) // a task's state: made once
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		c.Get()
		c.IsInitialized()
		*f = *c.GetOrInit(nilInitString)
		f.Poll(cx)
		_, _ = c.GetOrInitBlocking(context.Background(), nilInitBlocking)
	}))
}
