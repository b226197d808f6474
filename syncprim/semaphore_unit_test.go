package syncprim

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

// countWaker counts its wakes.
type countWaker struct{ n atomic.Int32 }

func (c *countWaker) Wake() { c.n.Add(1) }

// newCountCx returns a Context whose Waker counts wakes.
func newCountCx() (*future.Context, *countWaker) {
	cw := new(countWaker)
	return future.NewContext(waker.New(cw)), cw
}

// acqHolder keeps an AcquireFuture at a fixed address.
type acqHolder struct{ f AcquireFuture }

func newAcq(s *Semaphore, n int) *acqHolder {
	h := new(acqHolder)
	h.f = *s.Acquire(n)
	return h
}

func TestSemaphoreBasics(t *testing.T) {
	s := NewSemaphore(3)
	require.Equal(t, 3, s.Available())
	require.True(t, s.TryAcquire(2))
	require.False(t, s.TryAcquire(2))
	require.True(t, s.TryAcquire(0))
	require.False(t, s.TryAcquire(-1))
	require.Equal(t, 1, s.Available())
	s.Release(2)
	require.Equal(t, 3, s.Available())
	require.PanicsWithValue(t, ErrNegativePermits, func() { s.Release(-1) })
	require.PanicsWithValue(t, ErrNegativePermits, func() { NewSemaphore(-1) })
	if tooMany := int64(MaxPermits) + 1; tooMany <= math.MaxInt { // not expressible on 32-bit
		require.PanicsWithValue(t, ErrTooManyPermits, func() { NewSemaphore(int(tooMany)) })
	}
	require.PanicsWithValue(t, ErrTooManyPermits, func() { s.Release(MaxPermits) })
	require.Equal(t, 3, s.Available())
}

func TestSemaphoreZeroValue(t *testing.T) {
	var s Semaphore
	require.Equal(t, 0, s.Available())
	require.False(t, s.TryAcquire(1))
	s.Release(2)
	require.True(t, s.TryAcquire(2))
	require.False(t, s.IsClosed())
}

func TestSemaphoreFutureReadyAndInvalid(t *testing.T) {
	s := NewSemaphore(1)
	cx, _ := newCountCx()
	h := newAcq(s, 1)
	err, ok := h.f.Poll(cx)
	require.True(t, ok)
	require.NoError(t, err)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { h.f.Poll(cx) })
	h.f.Cancel() // no-op after completion
	require.Equal(t, 0, s.Available())

	h = newAcq(s, -1)
	err, ok = h.f.Poll(cx)
	require.True(t, ok)
	require.ErrorIs(t, err, ErrInvalidPermits)
	if tooMany := int64(MaxPermits) + 1; tooMany <= math.MaxInt { // not expressible on 32-bit
		h = newAcq(s, int(tooMany))
		err, _ = h.f.Poll(cx)
		require.ErrorIs(t, err, ErrInvalidPermits)
	}

	// n == 0 is ready at once, even behind a queue.
	q := newAcq(s, 1)
	_, ok = q.f.Poll(cx)
	require.False(t, ok)
	h = newAcq(s, 0)
	err, ok = h.f.Poll(cx)
	require.True(t, ok)
	require.NoError(t, err)
	require.NoError(t, s.AcquireBlocking(context.Background(), 0))
	require.ErrorIs(t, s.AcquireBlocking(context.Background(), -1), ErrInvalidPermits)
	q.f.Cancel()
	require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { q.f.Poll(cx) })
	q.f.Cancel() // idempotent
	s.Release(1)
	require.Equal(t, 1, s.Available())
	require.Equal(t, 0, s.waiters())
}

func TestSemaphoreFIFOAndNoBarging(t *testing.T) {
	s := NewSemaphore(0)
	cx, cw := newCountCx()
	hs := []*acqHolder{newAcq(s, 2), newAcq(s, 1), newAcq(s, 1)}
	for _, h := range hs {
		_, ok := h.f.Poll(cx)
		require.False(t, ok)
	}
	require.Equal(t, 3, s.waiters())
	s.Release(1) // accumulates at the head
	require.Equal(t, 0, s.Available())
	require.False(t, s.TryAcquire(1), "no barging past the queue")
	require.Equal(t, int32(0), cw.n.Load())
	s.Release(2) // head done, second done
	require.Equal(t, int32(2), cw.n.Load())
	require.Equal(t, 1, s.waiters())
	for _, h := range hs[:2] {
		err, ok := h.f.Poll(cx)
		require.True(t, ok)
		require.NoError(t, err)
	}
	_, ok := hs[2].f.Poll(cx)
	require.False(t, ok)
	s.Release(5)
	err, ok := hs[2].f.Poll(cx)
	require.True(t, ok)
	require.NoError(t, err)
	require.Equal(t, 4, s.Available())
	require.Equal(t, 0, s.waiters())
}

func TestSemaphoreClose(t *testing.T) {
	s := NewSemaphore(1)
	cx, cw := newCountCx()
	a := newAcq(s, 3)
	b := newAcq(s, 1)
	_, ok := a.f.Poll(cx)
	require.False(t, ok)
	_, ok = b.f.Poll(cx)
	require.False(t, ok)
	done := make(chan error)
	go func() { done <- s.AcquireBlocking(context.Background(), 1) }()
	require.True(t, waitUntil(t, "three queued acquirers", func() bool { return s.waiters() == 3 }))
	s.Close()
	s.Close()
	require.True(t, s.IsClosed())
	require.ErrorIs(t, <-done, ErrClosed)
	require.Equal(t, int32(2), cw.n.Load())
	err, ok := a.f.Poll(cx)
	require.True(t, ok)
	require.ErrorIs(t, err, ErrClosed)
	err, _ = b.f.Poll(cx)
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, 1, s.Available(), "the head's accumulated permit is free again")
	require.False(t, s.TryAcquire(1))
	c := newAcq(s, 1)
	err, _ = c.f.Poll(cx)
	require.ErrorIs(t, err, ErrClosed)
	c = newAcq(s, 0)
	err, _ = c.f.Poll(cx)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.AcquireBlocking(context.Background(), 1), ErrClosed)
	require.ErrorIs(t, s.AcquireBlocking(context.Background(), 0), ErrClosed)
	s.Release(2)
	require.Equal(t, 3, s.Available())
	require.Equal(t, 0, s.waiters())
}

// TestSemaphoreCancelEveryPoint cancels a future before its first poll,
// while queued (with and without accumulated permits), after it was granted
// but before its re-poll (the hand-off race) and after completion, and
// checks the permits with exact counts.
func TestSemaphoreCancelEveryPoint(t *testing.T) {
	cx, _ := newCountCx()
	t.Run("beforePoll", func(t *testing.T) {
		s := NewSemaphore(1)
		h := newAcq(s, 1)
		h.f.Cancel()
		require.Equal(t, 1, s.Available())
		require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { h.f.Poll(cx) })
	})
	t.Run("queued", func(t *testing.T) {
		s := NewSemaphore(0)
		h := newAcq(s, 1)
		_, ok := h.f.Poll(cx)
		require.False(t, ok)
		h.f.Cancel()
		require.Equal(t, 0, s.waiters())
		s.Release(1)
		require.Equal(t, 1, s.Available())
	})
	t.Run("queuedMiddle", func(t *testing.T) {
		s := NewSemaphore(0)
		hs := []*acqHolder{newAcq(s, 1), newAcq(s, 1), newAcq(s, 1)}
		for _, h := range hs {
			h.f.Poll(cx)
		}
		hs[1].f.Cancel()
		s.Release(3)
		for _, i := range []int{0, 2} {
			_, ok := hs[i].f.Poll(cx)
			require.True(t, ok)
		}
		require.Equal(t, 1, s.Available())
	})
	t.Run("accumulated", func(t *testing.T) {
		s := NewSemaphore(2)
		big := newAcq(s, 5)
		small := newAcq(s, 1)
		_, ok := big.f.Poll(cx) // takes the 2 free as a partial grant
		require.False(t, ok)
		require.Equal(t, 0, s.Available())
		_, ok = small.f.Poll(cx)
		require.False(t, ok)
		s.Release(1) // big has 3 of 5
		big.f.Cancel()
		// 3 pass on: 1 to small, 2 become free.
		err, ok := small.f.Poll(cx)
		require.True(t, ok)
		require.NoError(t, err)
		require.Equal(t, 2, s.Available())
		require.Equal(t, 0, s.waiters())
	})
	t.Run("grantedNotPolled", func(t *testing.T) {
		s := NewSemaphore(0)
		a, b := newAcq(s, 2), newAcq(s, 1)
		a.f.Poll(cx)
		b.f.Poll(cx)
		s.Release(2) // a is granted but not re-polled
		require.Equal(t, 1, s.waiters())
		a.f.Cancel() // its 2 pass on: 1 to b, 1 free
		err, ok := b.f.Poll(cx)
		require.True(t, ok)
		require.NoError(t, err)
		require.Equal(t, 1, s.Available())
		a.f.Cancel()
		require.Equal(t, 1, s.Available())
	})
	t.Run("grantedNoOneElse", func(t *testing.T) {
		s := NewSemaphore(0)
		a := newAcq(s, 2)
		a.f.Poll(cx)
		s.Release(2)
		a.f.Cancel()
		require.Equal(t, 2, s.Available())
	})
	t.Run("afterClose", func(t *testing.T) {
		s := NewSemaphore(1)
		a := newAcq(s, 2)
		a.f.Poll(cx)
		s.Close()
		a.f.Cancel() // its permit went back at Close; nothing twice
		require.Equal(t, 1, s.Available())
	})
	t.Run("afterCompletion", func(t *testing.T) {
		s := NewSemaphore(1)
		a := newAcq(s, 1)
		a.f.Poll(cx)
		a.f.Cancel()
		require.Equal(t, 0, s.Available(), "a completed acquire keeps its permits")
	})
}

func TestSemaphoreWakerReplaced(t *testing.T) {
	s := NewSemaphore(0)
	cx1, cw1 := newCountCx()
	cx2, cw2 := newCountCx()
	h := newAcq(s, 1)
	h.f.Poll(cx1)
	h.f.Poll(cx2)
	s.Release(1)
	require.Equal(t, int32(0), cw1.n.Load())
	require.Equal(t, int32(1), cw2.n.Load())
	_, ok := h.f.Poll(cx2)
	require.True(t, ok)
}

func TestSemaphoreBlockingCtx(t *testing.T) {
	s := NewSemaphore(0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := s.AcquireBlocking(ctx, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, s.waiters())

	// A done ctx with permits free: the permits win.
	s.Release(1)
	require.NoError(t, s.AcquireBlocking(ctx, 1))
	require.Equal(t, 0, s.Available())

	// Cancelled while at the head with an accumulated grant: it passes on.
	ctx2, cancel2 := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- s.AcquireBlocking(ctx2, 3) }()
	require.True(t, waitUntil(t, "one queued acquirer", func() bool { return s.waiters() == 1 }))
	cx, _ := newCountCx()
	b := newAcq(s, 1)
	b.f.Poll(cx)
	s.Release(2)
	cancel2()
	require.True(t, errors.Is(<-errc, context.Canceled))
	_, ok := b.f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 1, s.Available())
	require.Equal(t, 0, s.waiters())
}

// TestSemaphoreMixedFIFO queues goroutines and tasks alternately in one
// list and checks that grants follow queue order.
func TestSemaphoreMixedFIFO(t *testing.T) {
	sch := newScheduler(t, 2)
	s := NewSemaphore(0)
	const n = 8
	order := make(chan int, n)
	var hs []chan struct{}
	var tasks []func()
	for i := range n {
		if i%2 == 0 {
			done := make(chan struct{})
			hs = append(hs, done)
			go func() {
				defer close(done)
				require.NoError(t, s.AcquireBlocking(context.Background(), 1))
				order <- i
			}()
		} else {
			h := new(acqHolder)
			h.f = *s.Acquire(1)
			jh := spawnFn(sch, func(cx *future.Context) bool {
				if _, ok := h.f.Poll(cx); !ok {
					return false
				}
				order <- i
				return true
			})
			tasks = append(tasks, func() { waitAll(t, jh) })
		}
		require.True(t, waitUntil(t, "the next acquirer queued", func() bool { return s.waiters() == i+1 }))
	}
	for i := range n {
		s.Release(1)
		require.Equal(t, i, <-order)
	}
	for _, d := range hs {
		<-d
	}
	for _, w := range tasks {
		w()
	}
	require.Equal(t, 0, s.Available())
}
