package blitz_test

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileFutureInFlightCancelNotReused: a Read cancelled while the kernel
// (or the pool) holds it is never handed out again, and the File's next
// Read still gets the data the cancelled one took.
func TestFileFutureInFlightCancelNotReused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p, w := fifo(t, rt)
		buf := make([]byte, 16)
		rd := p.Read(buf)
		res, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(5*time.Millisecond, future.Future[future.Result[int]](rd)))
		require.NoError(t, err)
		require.ErrorIs(t, res.Err, blitz.ErrTimeout)
		nbuf := make([]byte, 16)
		next := p.Read(nbuf)
		assert.NotSame(t, rd, next, "a read cancelled in flight is not reused")
		_, err = w.Write([]byte("data"))
		require.NoError(t, err)
		n, err := awaitN(t, rt, next)
		require.NoError(t, err)
		assert.Equal(t, "data", string(nbuf[:n]))
	})
}
