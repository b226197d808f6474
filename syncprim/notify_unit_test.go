package syncprim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

func TestNotifyPermitDoesNotAccumulate(t *testing.T) {
	var n Notify
	require.False(t, n.TryNotified())
	require.True(t, n.notifyOne())
	require.False(t, n.notifyOne())
	require.True(t, n.TryNotified())
	require.False(t, n.TryNotified())
}

func TestNotifyWaitersStoresNoPermit(t *testing.T) {
	var n Notify
	n.NotifyWaiters()
	require.False(t, n.TryNotified())
	n.NotifyOne()
	n.NotifyWaiters() // leaves the stored permit alone
	require.True(t, n.TryNotified())
}

func TestNotifyPermitCompletesFirstPoll(t *testing.T) {
	var n Notify
	n.NotifyOne()
	_, cx := bnCx()
	f := n.Notified()
	_, ok := f.Poll(cx)
	require.True(t, ok)
	require.False(t, n.TryNotified())
	require.Equal(t, future.ErrPolledAfterCompletion, bnPanics(func() { f.Poll(cx) }))
	f.Cancel()
}

func TestNotifyOneIsFIFOAcrossTasksAndGoroutines(t *testing.T) {
	var n Notify
	w1, cx1 := bnCx()
	f1 := n.Notified()
	_, ok := f1.Poll(cx1)
	require.False(t, ok)
	done := make(chan error, 1)
	go func() { done <- n.NotifiedBlocking(context.Background()) }()
	require.True(t, waitUntil(t, "two queued waiters", func() bool { return n.waiterCount() == 2 }))
	w3, cx3 := bnCx()
	f3 := n.Notified()
	_, ok = f3.Poll(cx3)
	require.False(t, ok)
	n.NotifyOne()
	require.EqualValues(t, 1, w1.n.Load())
	_, ok = f1.Poll(cx1)
	require.True(t, ok)
	n.NotifyOne()
	require.NoError(t, <-done)
	require.EqualValues(t, 0, w3.n.Load())
	_, ok = f3.Poll(cx3)
	require.False(t, ok)
	f3.Cancel()
	require.Equal(t, 0, n.waiterCount())
	require.False(t, n.TryNotified())
}

func TestNotifyWaitersWakesExactlyCurrentWaiters(t *testing.T) {
	var n Notify
	const k = 40 // beyond one WakeList
	futs := make([]NotifiedFuture, k)
	ws := make([]*bnWaker, k)
	for i := range futs {
		w, cx := bnCx()
		ws[i] = w
		futs[i] = *n.Notified()
		_, ok := futs[i].Poll(cx)
		require.False(t, ok)
	}
	n.NotifyWaiters()
	_, cxl := bnCx()
	late := n.Notified() // made after: not woken by the earlier call
	_, ok := late.Poll(cxl)
	require.False(t, ok)
	for i := range futs {
		require.EqualValues(t, 1, ws[i].n.Load())
		_, cx := bnCx()
		_, ok := futs[i].Poll(cx)
		require.True(t, ok)
	}
	require.Equal(t, 1, n.waiterCount())
	late.Cancel()
	require.False(t, n.TryNotified(), "cancel after NotifyWaiters passes nothing on")
}

func TestNotifyUnpolledFutureSeesNotifyWaiters(t *testing.T) {
	var n Notify
	f := n.Notified() // created, condition checked, not polled yet
	n.NotifyWaiters()
	_, cx := bnCx()
	_, ok := f.Poll(cx)
	require.True(t, ok)
	g := n.Notified() // created after: pending
	_, ok = g.Poll(cx)
	require.False(t, ok)
	g.Cancel()
	// NotifyOne does not reach an unpolled future: it stores a permit.
	h := n.Notified()
	n.NotifyOne()
	_, ok = h.Poll(cx)
	require.True(t, ok)
	require.False(t, n.TryNotified())
}

func TestNotifyCancelAfterNotifyOnePassesOn(t *testing.T) {
	var n Notify
	_, cx1 := bnCx()
	w2, cx2 := bnCx()
	f1, f2 := n.Notified(), n.Notified()
	f1.Poll(cx1)
	f2.Poll(cx2)
	n.NotifyOne() // handed to f1
	f1.Cancel()   // woken but not repolled: passes to f2
	require.EqualValues(t, 1, w2.n.Load())
	f1.Cancel() // idempotent
	_, ok := f2.Poll(cx2)
	require.True(t, ok)
	require.False(t, n.TryNotified(), "not doubled")
	// With nobody behind it, the notification becomes the permit.
	f3 := n.Notified()
	f3.Poll(cx1)
	n.NotifyOne()
	f3.Cancel()
	require.True(t, n.TryNotified())
	require.False(t, n.TryNotified())
	// Cancel before the first poll and after registering.
	f4 := n.Notified()
	f4.Cancel()
	require.Equal(t, future.ErrPolledAfterCancel, bnPanics(func() { f4.Poll(cx1) }))
	f5 := n.Notified()
	f5.Poll(cx1)
	f5.Cancel()
	require.Equal(t, 0, n.waiterCount())
	n.NotifyOne()
	require.True(t, n.TryNotified(), "a removed waiter takes nothing")
}

func TestNotifyBlockingCtx(t *testing.T) {
	var n Notify
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, n.NotifiedBlocking(ctx), context.DeadlineExceeded)
	require.Equal(t, 0, n.waiterCount())
	n.NotifyOne()
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	require.NoError(t, n.NotifiedBlocking(done), "a stored permit wins over a done ctx")
	require.ErrorIs(t, n.NotifiedBlocking(done), context.Canceled)
}

// TestNotifyCancelRacesNotifyOne races NotifyOne with the cancel of the
// only waiter: the notification ends up as the permit either way.
func TestNotifyCancelRacesNotifyOne(t *testing.T) {
	rounds := 20_000
	if testing.Short() {
		rounds = 2_000
	}
	for range rounds {
		var n Notify
		_, cx := bnCx()
		f := n.Notified()
		f.Poll(cx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); n.NotifyOne() }()
		f.Cancel()
		wg.Wait()
		require.True(t, n.TryNotified())
		require.Equal(t, 0, n.waiterCount())
	}
}

// TestNotifyBlockingCtxRacesNotifyOne: a blocking waiter whose ctx ends as
// it is notified passes the notification on, or consumed it and returned nil.
func TestNotifyBlockingCtxRacesNotifyOne(t *testing.T) {
	rounds := 2_000
	if testing.Short() {
		rounds = 300
	}
	for range rounds {
		var n Notify
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- n.NotifiedBlocking(ctx) }()
		for n.waiterCount() != 1 {
			time.Sleep(10 * time.Microsecond)
		}
		go cancel()
		n.NotifyOne()
		err := <-errc
		cancel()
		if err == nil {
			require.False(t, n.TryNotified())
		} else {
			require.ErrorIs(t, err, context.Canceled)
			require.True(t, n.TryNotified(), "lost")
		}
	}
}
