package channels

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
)

func TestUnboundedBasic(t *testing.T) {
	u := NewUnbounded[int]()
	for round := 0; round < 3; round++ {
		n := 200 + round
		for i := 0; i < n; i++ {
			require.NoError(t, u.Send(i))
			require.Equal(t, i+1, u.Len())
		}
		for i := 0; i < n; i++ {
			v, err := u.TryRecv()
			require.NoError(t, err)
			require.Equal(t, i, v)
			require.Equal(t, n-i-1, u.Len())
		}
		_, err := u.TryRecv()
		assert.Equal(t, ErrEmpty, err)
	}
}

func TestUnboundedClose(t *testing.T) {
	u := NewUnbounded[string]()
	require.NoError(t, u.Send("a"))
	require.NoError(t, u.Send("b"))
	assert.True(t, u.Close())
	assert.False(t, u.Close())
	assert.True(t, u.IsClosed())
	assert.Equal(t, ErrClosed, u.Send("c"))
	v, err := u.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, "a", v)
	v, err = u.RecvBlocking(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "b", v)
	_, err = u.TryRecv()
	assert.Equal(t, ErrClosed, err)
	_, err = u.RecvBlocking(context.Background())
	assert.Equal(t, ErrClosed, err)
	cx, _ := mpCx()
	f := u.Recv()
	res, ok := f.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, ErrClosed, res.Err)
}

func TestUnboundedFuture(t *testing.T) {
	u := NewUnbounded[int]()
	cx, w := mpCx()
	f := u.Recv()
	_, ok := f.Poll(cx)
	require.False(t, ok)
	assert.Equal(t, 1, u.waiters())
	require.NoError(t, u.Send(3))
	assert.Equal(t, int64(1), w.n.Load())
	res, ok := f.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, 3, res.Value)
	assert.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) })

	g := u.Recv()
	_, ok = g.Poll(cx)
	require.False(t, ok)
	g.Cancel()
	g.Cancel()
	assert.Zero(t, u.waiters())
	assert.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { g.Poll(cx) })

	// woken, then cancelled: the value stays for the next receive
	h := u.Recv()
	_, ok = h.Poll(cx)
	require.False(t, ok)
	require.NoError(t, u.Send(4))
	h.Cancel()
	v, err := u.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 4, v)

	// close wakes the waiter
	k := u.Recv()
	_, ok = k.Poll(cx)
	require.False(t, ok)
	u.Close()
	res, ok = k.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, ErrClosed, res.Err)
}

func TestUnboundedBlocking(t *testing.T) {
	u := NewUnbounded[int]()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err := u.RecvBlocking(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, u.waiters())
	done := make(chan struct{})
	go func() {
		defer close(done)
		v, err := u.RecvBlocking(context.Background())
		assert.NoError(t, err)
		assert.Equal(t, 9, v)
	}()
	require.True(t, waitUntil(t, "the receiver waiting", func() bool { return u.waiters() == 1 }))
	require.NoError(t, u.Send(9))
	<-done
}

func TestUnboundedConcurrentRecvPanics(t *testing.T) {
	u := NewUnbounded[int]()
	u.receiving.Store(true) // as if another receive were running
	assert.PanicsWithValue(t, ErrConcurrentRecv, func() { _, _ = u.TryRecv() })
	cx, _ := mpCx()
	f := u.Recv()
	assert.PanicsWithValue(t, ErrConcurrentRecv, func() { f.Poll(cx) })
	assert.PanicsWithValue(t, ErrConcurrentRecv, func() { _, _ = u.RecvBlocking(context.Background()) })
	u.receiving.Store(false)
	_, err := u.TryRecv()
	assert.Equal(t, ErrEmpty, err)
}

func TestUnboundedAllocs(t *testing.T) {
	u := NewUnbounded[int]()
	cx, _ := mpCx()
	// Amortized: one block of 31 slots per 31 sends, so the average
	// AllocsPerRun reports (an integer, truncated) is zero.
	assert.Zero(t, testing.AllocsPerRun(3100, func() {
		_ = u.Send(1)
		_, _ = u.TryRecv()
	}))
	f := new(UnboundedRecvFuture[int])
	assert.Zero(t, testing.AllocsPerRun(3100, func() {
		_ = u.Send(1)
		*f = *u.Recv()
		f.Poll(cx)
	}))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = u.TryRecv() }))
}

func TestUnboundedModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cx, _ := mpCx()
	for iter := 0; iter < 200; iter++ {
		u := NewUnbounded[int]()
		ref := &refQueue{}
		next := 0
		for step := 0; step < 300; step++ {
			switch op := rng.IntN(20); {
			case op < 9:
				next++
				require.Equal(t, ref.send(next), u.Send(next))
			case op < 15:
				v, err := u.TryRecv()
				rv, rerr := ref.recv()
				require.Equal(t, rerr, err)
				require.Equal(t, rv, v)
			case op < 18:
				f := u.Recv()
				res, ok := f.Poll(cx)
				rv, rerr := ref.recv()
				if rerr == ErrEmpty {
					require.False(t, ok)
					if rng.IntN(2) == 0 {
						f.Cancel()
						break
					}
					next++
					require.NoError(t, u.Send(next))
					require.NoError(t, ref.send(next))
					res, ok = f.Poll(cx)
					rv, rerr = ref.recv()
				}
				require.True(t, ok)
				require.Equal(t, rerr, res.Err)
				require.Equal(t, rv, res.Value)
			case op < 19:
				require.Equal(t, len(ref.q), u.Len())
			default:
				if rng.IntN(8) == 0 {
					require.Equal(t, ref.close(), u.Close())
				}
			}
			require.Zero(t, u.waiters())
		}
	}
}
