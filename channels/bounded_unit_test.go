package channels

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// mpWake counts wakes: the Wakeable of futures polled by hand in tests.
type mpWake struct{ n atomic.Int64 }

func (w *mpWake) Wake() { w.n.Add(1) }

// mpCx returns a Context whose Waker counts into a fresh mpWake.
func mpCx() (*future.Context, *mpWake) {
	w := new(mpWake)
	return future.NewContext(waker.New(w)), w
}

func TestBoundedBasic(t *testing.T) {
	for _, capacity := range []int{1, 2, 3, 4, 7, 8} {
		c := NewBounded[int](capacity)
		assert.Equal(t, capacity, c.Cap())
		for round := 0; round < 3; round++ {
			for i := 0; i < capacity; i++ {
				require.NoError(t, c.TrySend(i))
			}
			assert.Equal(t, capacity, c.Len())
			assert.ErrorIs(t, c.TrySend(99), ErrFull)
			for i := 0; i < capacity; i++ {
				v, err := c.TryRecv()
				require.NoError(t, err)
				assert.Equal(t, i, v)
			}
			_, err := c.TryRecv()
			assert.ErrorIs(t, err, ErrEmpty)
			assert.Equal(t, 0, c.Len())
		}
	}
}

func TestBoundedCapacityPanics(t *testing.T) {
	for _, n := range []int{0, -1} {
		func() {
			defer func() { assert.Equal(t, ErrCapacity, recover()) }()
			NewBounded[int](n)
		}()
	}
}

func TestBoundedClose(t *testing.T) {
	c := NewBounded[int](3)
	require.NoError(t, c.TrySend(1))
	require.NoError(t, c.TrySend(2))
	assert.False(t, c.IsClosed())
	assert.True(t, c.Close())
	assert.False(t, c.Close())
	assert.True(t, c.IsClosed())
	assert.Equal(t, ErrClosed, c.TrySend(3))
	err := c.SendBlocking(context.Background(), 4)
	var se *SendError[int]
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 4, se.Value)
	assert.ErrorIs(t, err, ErrClosed)
	f := c.Send(5)
	cx, _ := mpCx()
	r, ok := f.Poll(cx)
	require.True(t, ok)
	require.ErrorAs(t, r, &se)
	assert.Equal(t, 5, se.Value)
	// drain, then ErrClosed on every tier
	v, err := c.TryRecv()
	assert.NoError(t, err)
	assert.Equal(t, 1, v)
	v, err = c.RecvBlocking(context.Background())
	assert.NoError(t, err)
	assert.Equal(t, 2, v)
	_, err = c.TryRecv()
	assert.Equal(t, ErrClosed, err)
	_, err = c.RecvBlocking(context.Background())
	assert.Equal(t, ErrClosed, err)
	rf := c.Recv()
	res, ok := rf.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, ErrClosed, res.Err)
}

func TestBoundedCloseWakesWaiters(t *testing.T) {
	c := NewBounded[int](1)
	cx, w := mpCx()
	r1, r2 := c.Recv(), c.Recv()
	_, ok := r1.Poll(cx)
	require.False(t, ok)
	_, ok = r2.Poll(cx)
	require.False(t, ok)
	full := NewBounded[int](1)
	require.NoError(t, full.TrySend(0))
	s1 := full.Send(1)
	_, ok = s1.Poll(cx)
	require.False(t, ok)
	s, r := full.waiters()
	assert.Equal(t, 1, s)
	assert.Equal(t, 0, r)
	_, r = c.waiters()
	assert.Equal(t, 2, r)

	c.Close()
	full.Close()
	assert.Equal(t, int64(3), w.n.Load())
	res, ok := r1.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, ErrClosed, res.Err)
	res, ok = r2.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, ErrClosed, res.Err)
	err, ok := s1.Poll(cx)
	require.True(t, ok)
	var se *SendError[int]
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 1, se.Value)
	v, e := full.TryRecv()
	assert.NoError(t, e)
	assert.Equal(t, 0, v)
	_, e = full.TryRecv()
	assert.Equal(t, ErrClosed, e)
}

func TestBoundedFuturePhases(t *testing.T) {
	c := NewBounded[int](1)
	cx, _ := mpCx()
	f := c.Send(1)
	err, ok := f.Poll(cx)
	require.True(t, ok)
	require.NoError(t, err)
	assert.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) })
	f.Cancel() // no-op after completion
	r := c.Recv()
	res, ok := r.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, 1, res.Value)
	assert.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { r.Poll(cx) })

	f2 := c.Send(2)
	f2.Cancel()
	f2.Cancel()
	assert.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { f2.Poll(cx) })
	r2 := c.Recv()
	r2.Cancel()
	assert.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { r2.Poll(cx) })
	assert.Equal(t, 0, c.Len())
}

func TestBoundedWaitAndWake(t *testing.T) {
	c := NewBounded[int](1)
	cx, w := mpCx()
	r := c.Recv()
	_, ok := r.Poll(cx)
	require.False(t, ok)
	_, ok = r.Poll(cx) // still linked: not ready
	require.False(t, ok)
	require.NoError(t, c.TrySend(7))
	assert.Equal(t, int64(1), w.n.Load())
	res, ok := r.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, 7, res.Value)

	require.NoError(t, c.TrySend(8))
	s := c.Send(9)
	_, ok = s.Poll(cx)
	require.False(t, ok)
	v, err := c.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 8, v)
	assert.Equal(t, int64(2), w.n.Load())
	err, ok = s.Poll(cx)
	require.True(t, ok)
	require.NoError(t, err)
	v, err = c.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 9, v)
}

func TestBoundedSetWaker(t *testing.T) {
	c := NewBounded[int](1)
	cx1, w1 := mpCx()
	cx2, w2 := mpCx()
	r := c.Recv()
	_, ok := r.Poll(cx1)
	require.False(t, ok)
	_, ok = r.Poll(cx2)
	require.False(t, ok)
	require.NoError(t, c.TrySend(1))
	assert.Equal(t, int64(0), w1.n.Load())
	assert.Equal(t, int64(1), w2.n.Load())
	r.Cancel() // woken then cancelled: nobody to pass to
	v, err := c.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 1, v)
}

func TestBoundedBlockingCtx(t *testing.T) {
	c := NewBounded[int](1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.RecvBlocking(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, c.SendBlocking(ctx, 1)) // room wins over a done ctx
	err = c.SendBlocking(ctx, 2)
	var se *SendError[int]
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Value)
	assert.ErrorIs(t, err, context.Canceled)
	v, err := c.RecvBlocking(ctx) // value wins over a done ctx
	require.NoError(t, err)
	assert.Equal(t, 1, v)

	tctx, tcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer tcancel()
	_, err = c.RecvBlocking(tctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	s, r := c.waiters()
	assert.Zero(t, s+r)

	done := make(chan struct{})
	go func() {
		defer close(done)
		v, err := c.RecvBlocking(context.Background())
		assert.NoError(t, err)
		assert.Equal(t, 42, v)
	}()
	require.True(t, waitUntil(t, "the receiver waiting", func() bool { _, r := c.waiters(); return r == 1 }))
	require.NoError(t, c.SendBlocking(context.Background(), 42))
	<-done
}

func TestBoundedSendErrorIs(t *testing.T) {
	c := NewBounded[string](1)
	c.Close()
	err := c.SendBlocking(context.Background(), "x")
	assert.True(t, errors.Is(err, ErrClosed))
	assert.Contains(t, err.Error(), "closed")
}

func TestBoundedAllocs(t *testing.T) {
	c := NewBounded[int](8)
	cx, _ := mpCx()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = c.TrySend(1)
		_, _ = c.TryRecv()
	}), "try tier")
	// A task embeds its futures in its state; so does this test.
	st := new(struct {
		s SendFuture[int]
		r RecvFuture[int]
	})
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		st.s = *c.Send(1)
		st.s.Poll(cx)
		st.r = *c.Recv()
		st.r.Poll(cx)
	}), "future tier ready at once")
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = c.SendBlocking(ctx, 1)
		_, _ = c.RecvBlocking(ctx)
	}), "blocking tier uncontended")
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = c.TrySend(1)
		_ = c.TrySend(1)
		_ = c.TrySend(1)
		_ = c.TrySend(1)
		_ = c.TrySend(1)
		_ = c.TrySend(1)
		_ = c.TrySend(1)
		_ = c.TrySend(1)
		_ = c.TrySend(1) // full
		for range 9 {
			_, _ = c.TryRecv() // last one empty
		}
	}), "full and empty")
}
