package channels

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBoundedCancelBeforePoll(t *testing.T) {
	c := NewBounded[int](1)
	s := c.Send(1)
	s.Cancel()
	r := c.Recv()
	r.Cancel()
	assert.Equal(t, 0, c.Len())
	snd, rcv := c.waiters()
	assert.Zero(t, snd+rcv)
}

func TestBoundedCancelRegistered(t *testing.T) {
	c := NewBounded[int](1)
	cx, w := mpCx()
	r := c.Recv()
	_, ok := r.Poll(cx)
	require.False(t, ok)
	r.Cancel()
	_, rcv := c.waiters()
	assert.Zero(t, rcv)
	require.NoError(t, c.TrySend(1))
	assert.Zero(t, w.n.Load(), "a cancelled receiver is not woken")

	s := c.Send(2)
	_, ok = s.Poll(cx)
	require.False(t, ok)
	s.Cancel()
	snd, _ := c.waiters()
	assert.Zero(t, snd)
	v, err := c.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	_, err = c.TryRecv()
	assert.Equal(t, ErrEmpty, err, "a cancelled send never placed its value")
}

// A receiver woken for a value and cancelled before its re-poll passes the
// wake to the next receiver, which gets the value.
func TestBoundedCancelWokenRecvPassesOn(t *testing.T) {
	c := NewBounded[int](2)
	cx1, w1 := mpCx()
	cx2, w2 := mpCx()
	r1, r2 := c.Recv(), c.Recv()
	_, ok := r1.Poll(cx1)
	require.False(t, ok)
	_, ok = r2.Poll(cx2)
	require.False(t, ok)
	require.NoError(t, c.TrySend(5))
	assert.Equal(t, int64(1), w1.n.Load())
	assert.Zero(t, w2.n.Load())
	r1.Cancel()
	assert.Equal(t, int64(1), w2.n.Load(), "wake passed on")
	res, ok := r2.Poll(cx2)
	require.True(t, ok)
	assert.Equal(t, 5, res.Value)
	_, rcv := c.waiters()
	assert.Zero(t, rcv)
}

// A sender woken for room and cancelled before its re-poll passes the wake
// on; its own value was never placed.
func TestBoundedCancelWokenSendPassesOn(t *testing.T) {
	c := NewBounded[int](1)
	require.NoError(t, c.TrySend(0))
	cx1, w1 := mpCx()
	cx2, w2 := mpCx()
	s1, s2 := c.Send(1), c.Send(2)
	_, ok := s1.Poll(cx1)
	require.False(t, ok)
	_, ok = s2.Poll(cx2)
	require.False(t, ok)
	v, err := c.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 0, v)
	assert.Equal(t, int64(1), w1.n.Load())
	s1.Cancel()
	assert.Equal(t, int64(1), w2.n.Load(), "wake passed on")
	err, ok = s2.Poll(cx2)
	require.True(t, ok)
	require.NoError(t, err)
	v, err = c.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 2, v, "only the completed send placed its value")
	_, err = c.TryRecv()
	assert.Equal(t, ErrEmpty, err)
	snd, _ := c.waiters()
	assert.Zero(t, snd)
}

// A woken receiver that re-polls after another party took the value
// registers again rather than returning empty.
func TestBoundedWokenReregisters(t *testing.T) {
	c := NewBounded[int](1)
	cx, w := mpCx()
	r := c.Recv()
	_, ok := r.Poll(cx)
	require.False(t, ok)
	require.NoError(t, c.TrySend(1))
	_, err := c.TryRecv() // steal it
	require.NoError(t, err)
	_, ok = r.Poll(cx)
	require.False(t, ok)
	_, rcv := c.waiters()
	assert.Equal(t, 1, rcv)
	require.NoError(t, c.TrySend(2))
	assert.Equal(t, int64(2), w.n.Load())
	res, ok := r.Poll(cx)
	require.True(t, ok)
	assert.Equal(t, 2, res.Value)
}

// Blocking receivers and senders time out while values flow: every value is
// received exactly once or returned, and no waiter is left.
func TestBoundedBlockingTimeoutsStress(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 1000
	}
	c := NewBounded[int](2)
	var got sync.Map
	var received, returned atomic.Int64
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < n; i += 4 {
				for {
					ctx, cancel := context.WithTimeout(context.Background(), 50*time.Microsecond)
					err := c.SendBlocking(ctx, i)
					cancel()
					if err == nil {
						break
					}
					var se *SendError[int]
					if assert.ErrorAs(t, err, &se) {
						assert.Equal(t, i, se.Value)
					}
					returned.Add(1)
				}
			}
		}()
	}
	var cwg sync.WaitGroup
	for k := 0; k < 4; k++ {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Microsecond)
				v, err := c.RecvBlocking(ctx)
				cancel()
				if err == ErrClosed {
					return
				}
				if err != nil {
					continue
				}
				_, dup := got.LoadOrStore(v, true)
				assert.False(t, dup, "duplicate %d", v)
				received.Add(1)
			}
		}()
	}
	wg.Wait()
	c.Close()
	cwg.Wait()
	assert.Equal(t, int64(n), received.Load())
	snd, rcv := c.waiters()
	assert.Zero(t, snd+rcv)
	t.Logf("send timeouts: %d", returned.Load())
}
