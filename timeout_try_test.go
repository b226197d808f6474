package blitz_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// failCounter is a fallible future that never completes and counts its
// cancels.
type failCounter struct{ cancelCounter }

func (c *failCounter) Poll(cx *future.Context) (future.Result[int], bool) {
	c.cancelCounter.Poll(cx)
	return future.Result[int]{}, false
}

// TestTryTimeout: TryTimeout gives the inner future's Result as it is (its
// value, or its own error), or ErrTimeout in the same one Result, cancelling
// the inner future.
func TestTryTimeout(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	errOwn := errors.New("own")

	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.TryTimeout(time.Hour, future.Ready(future.Ok(7))))
	require.NoError(t, err)
	assert.Equal(t, future.Ok(7), r)
	assert.Zero(t, rt.Stats().Timers, "the timer left the wheel")

	r, err = blitz.BlockOn(testCtx(t), rt.Handle(), blitz.TryTimeout(time.Hour, future.Ready(future.Fail[int](errOwn))))
	require.NoError(t, err)
	assert.ErrorIs(t, r.Err, errOwn)
	assert.NotErrorIs(t, r.Err, blitz.ErrTimeout)

	inner := &failCounter{}
	r, err = blitz.BlockOn(testCtx(t), rt.Handle(), blitz.TryTimeout(5*time.Millisecond, future.Future[future.Result[int]](inner)))
	require.NoError(t, err)
	assert.ErrorIs(t, r.Err, blitz.ErrTimeout)
	assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
	assert.EqualValues(t, 1, inner.cancels.Load(), "the timed-out future was cancelled")

	r, err = blitz.BlockOn(testCtx(t), rt.Handle(), blitz.TryDeadline(time.Now().Add(-time.Second), future.Ready(future.Ok(3))))
	require.NoError(t, err)
	assert.Equal(t, future.Ok(3), r, "the inner future is polled first")

	inner2 := &failCounter{}
	to := blitz.TryTimeout(time.Hour, future.Future[future.Result[int]](inner2))
	_, err = blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		_, ok := to.Poll(cx)
		require.False(t, ok)
		return struct{}{}, true
	}))
	require.NoError(t, err)
	future.Cancel(to)
	future.Cancel(to)
	assert.EqualValues(t, 1, inner2.cancels.Load())
	assert.Zero(t, rt.Stats().Timers)

	r, err = blitz.BlockOn(testCtx(t), rt.Handle(), blitz.TryTimeout[int](time.Second, nil))
	require.NoError(t, err)
	assert.ErrorIs(t, r.Err, blitz.ErrNilFuture)
}
