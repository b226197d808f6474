package syncprim

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

// bnWaker counts wakes; a test polls futures by hand with a Context of it.
type bnWaker struct{ n atomic.Int64 }

func (w *bnWaker) Wake() { w.n.Add(1) }

// bnCx returns a counting waker and a Context that wakes it.
func bnCx() (*bnWaker, *future.Context) {
	w := new(bnWaker)
	return w, future.NewContext(waker.New(w))
}

// bnPanics returns the panic value of fn (nil if none).
func bnPanics(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

func TestBarrierNewPanicsOnBadSize(t *testing.T) {
	for _, n := range []int{0, -1, -100} {
		require.Equal(t, ErrBarrierSize, bnPanics(func() { NewBarrier(n) }))
	}
}

func TestBarrierOfOneAlwaysLeads(t *testing.T) {
	b := NewBarrier(1)
	_, cx := bnCx()
	for g := range uint64(5) {
		f := b.Wait()
		r, ok := f.Poll(cx)
		require.True(t, ok)
		require.Equal(t, BarrierResult{Leader: true, Generation: 3 * g}, r)
		r, ok = b.TryWait()
		require.True(t, ok)
		require.Equal(t, BarrierResult{Leader: true, Generation: 3*g + 1}, r)
		r, err := b.WaitBlocking(context.Background())
		require.NoError(t, err)
		require.Equal(t, BarrierResult{Leader: true, Generation: 3*g + 2}, r)
	}
}

func TestBarrierFutureRound(t *testing.T) {
	b := NewBarrier(3)
	w1, cx1 := bnCx()
	w2, cx2 := bnCx()
	f1, f2 := b.Wait(), b.Wait()
	_, ok := f1.Poll(cx1)
	require.False(t, ok)
	_, ok = b.TryWait() // would be the second arrival: does not arrive
	require.False(t, ok)
	require.Equal(t, 1, b.waiterCount())
	_, ok = f2.Poll(cx2)
	require.False(t, ok)
	_, ok = f1.Poll(cx1) // repoll while queued
	require.False(t, ok)
	r, ok := b.TryWait() // third arrival: leader
	require.True(t, ok)
	require.Equal(t, BarrierResult{Leader: true}, r)
	require.EqualValues(t, 1, w1.n.Load())
	require.EqualValues(t, 1, w2.n.Load())
	require.Equal(t, 0, b.waiterCount())
	// A new round starts before the released futures are polled again:
	// they still report round 0.
	f3 := b.Wait()
	_, ok = f3.Poll(cx1)
	require.False(t, ok)
	r, ok = f1.Poll(cx1)
	require.True(t, ok)
	require.Equal(t, BarrierResult{}, r)
	r, ok = f2.Poll(cx2)
	require.True(t, ok)
	require.Equal(t, BarrierResult{}, r)
	f3.Cancel()
	require.Equal(t, 0, b.waiterCount())
}

func TestBarrierFutureMisuse(t *testing.T) {
	b := NewBarrier(1)
	_, cx := bnCx()
	f := b.Wait()
	f.Poll(cx)
	require.Equal(t, future.ErrPolledAfterCompletion, bnPanics(func() { f.Poll(cx) }))
	f.Cancel() // no-op after completion
	g := b.Wait()
	g.Cancel()
	g.Cancel()
	require.Equal(t, future.ErrPolledAfterCancel, bnPanics(func() { g.Poll(cx) }))
}

func TestBarrierCancelWithdraws(t *testing.T) {
	b := NewBarrier(2)
	_, cx := bnCx()
	f := b.Wait()
	f.Cancel() // before first poll: never arrived
	f1 := b.Wait()
	_, ok := f1.Poll(cx)
	require.False(t, ok)
	f1.Cancel() // after registering: withdrawn
	require.Equal(t, 0, b.waiterCount())
	_, ok = b.TryWait() // only arrival: not a leader
	require.False(t, ok)
	f2 := b.Wait()
	_, ok = f2.Poll(cx)
	require.False(t, ok) // the withdrawn arrival does not count
	r, ok := b.TryWait()
	require.True(t, ok)
	require.Equal(t, BarrierResult{Leader: true}, r)
	f2.Cancel() // woken but not repolled: the round happened, no-op
	r, ok = b.TryWait()
	require.False(t, ok, "the cancel after the round must not withdraw from round 1: %v", r)
	require.Equal(t, 0, b.waiterCount())
}

func TestBarrierBlockingCtxWithdraws(t *testing.T) {
	b := NewBarrier(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := b.WaitBlocking(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, b.waiterCount())
	_, ok := b.TryWait()
	require.False(t, ok)
	// A done ctx with the round completable: the arrival leads.
	_, cx := bnCx()
	f := b.Wait()
	f.Poll(cx)
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	r, err := b.WaitBlocking(done)
	require.NoError(t, err)
	require.Equal(t, BarrierResult{Leader: true}, r)
}

func TestBarrierBlockingMixedWithFutures(t *testing.T) {
	b := NewBarrier(3)
	_, cx := bnCx()
	f := b.Wait()
	_, ok := f.Poll(cx)
	require.False(t, ok)
	errc := make(chan error, 1)
	var res BarrierResult
	go func() {
		var err error
		res, err = b.WaitBlocking(context.Background())
		errc <- err
	}()
	require.True(t, waitUntil(t, "two queued arrivals", func() bool { return b.waiterCount() == 2 }))
	r, ok := b.TryWait()
	require.True(t, ok)
	require.True(t, r.Leader)
	require.NoError(t, <-errc)
	require.Equal(t, BarrierResult{}, res)
	_, ok = f.Poll(cx)
	require.True(t, ok)
}

func TestBarrierBlockingCtxErrorWraps(t *testing.T) {
	b := NewBarrier(2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.WaitBlocking(ctx)
	require.True(t, errors.Is(err, context.Canceled))
	require.Equal(t, 0, b.waiterCount())
}
