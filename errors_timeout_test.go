package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

func TestErrTimeoutMatchesContextDeadlineExceeded(t *testing.T) {
	assert.ErrorIs(t, blitz.ErrTimeout, blitz.ErrTimeout)
	assert.ErrorIs(t, blitz.ErrTimeout, context.DeadlineExceeded)
	assert.ErrorIs(t, fmt.Errorf("wrapped: %w", blitz.ErrTimeout), context.DeadlineExceeded)
	assert.NotErrorIs(t, blitz.ErrTimeout, context.Canceled)
	assert.NotErrorIs(t, context.DeadlineExceeded, blitz.ErrTimeout, "the match is one way: a context's error is not a runtime timeout")
	assert.Equal(t, "blitz: timeout", blitz.ErrTimeout.Error())
	var te interface{ Timeout() bool }
	require.True(t, errors.As(blitz.ErrTimeout, &te))
	assert.True(t, te.Timeout())

	// The error of a Timeout whose time ran out.
	rt := newRuntime(t, blitz.Config{Workers: 1})
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(time.Millisecond, future.Pending[int]()))
	require.NoError(t, err)
	assert.ErrorIs(t, r.Err, blitz.ErrTimeout)
	assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
}

// TestErrTimeoutOfIOMatchesAllThree checks an I/O timeout on every backend:
// ErrTimeout, os.ErrDeadlineExceeded and context.DeadlineExceeded.
func TestErrTimeoutOfIOMatchesAllThree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, _ := tcpPair(t, rt)
		s.SetReadTimeout(10 * time.Millisecond)
		buf := make([]byte, 8)
		rd := s.Read(buf)
		r := await(t, rt, future.Future[future.Result[int]](rd))
		require.Error(t, r.Err)
		assert.ErrorIs(t, r.Err, blitz.ErrTimeout)
		assert.ErrorIs(t, r.Err, os.ErrDeadlineExceeded)
		assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
	})
}
