package blitz_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// pollOnce polls its future once and is ready either way, leaving the
// future in flight: a test's way to start an operation and keep it.
type pollOnce struct {
	f    future.Future[future.Result[int]]
	done bool
}

func (p *pollOnce) Poll(cx *future.Context) (bool, bool) {
	_, p.done = p.f.Poll(cx)
	return p.done, true
}

// TestFileReadCancelledLosesNothing: Reads of an empty FIFO cancelled by a
// Timeout, again and again, do not eat what is written after them: the
// next Read gets it, and nothing is read twice.
func TestFileReadCancelledLosesNothing(t *testing.T) {
	rounds := 64
	if testing.Short() {
		rounds = 16
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p, w := fifo(t, rt)
		buf := make([]byte, 16)
		for i := range rounds {
			res, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(time.Millisecond, future.Future[future.Result[int]](p.Read(buf))))
			require.NoError(t, err)
			require.ErrorIs(t, res.Err, blitz.ErrTimeout, "round %d: an empty FIFO has nothing to read", i)
		}
		_, err := w.Write([]byte("fifo"))
		require.NoError(t, err)
		n, err := awaitN(t, rt, p.Read(buf))
		require.NoError(t, err)
		assert.Equal(t, "fifo", string(buf[:n]))
		res, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(20*time.Millisecond, future.Future[future.Result[int]](p.Read(buf))))
		require.NoError(t, err)
		require.ErrorIs(t, res.Err, blitz.ErrTimeout, "the data was delivered once")
		_, err = awaitClose(t, rt, p.Close())
		require.NoError(t, err)
	})
}

// TestFileReadCancelledAfterItsDataArrived: a Read cancelled after its read
// took bytes from the FIFO hands them to the next Reads, in order, however
// small their buffers.
func TestFileReadCancelledAfterItsDataArrived(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p, w := fifo(t, rt)
		first := make([]byte, 64)
		fut := p.Read(first)
		started, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[bool](&pollOnce{f: fut}))
		require.NoError(t, err)
		require.False(t, started, "an empty FIFO has nothing to read")
		_, err = w.Write([]byte("hello, world"))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			unread, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ)
			return err == nil && unread == 0
		}, 5*time.Second, time.Millisecond, "the read in flight takes the bytes")
		fut.Cancel()

		small := make([]byte, 5)
		n, err := awaitN(t, rt, p.Read(small))
		require.NoError(t, err)
		assert.Equal(t, "hello", string(small[:n]))
		rest := make([]byte, 64)
		n, err = awaitN(t, rt, p.Read(rest))
		require.NoError(t, err)
		assert.Equal(t, ", world", string(rest[:n]))

		_, err = w.Write([]byte("next"))
		require.NoError(t, err)
		n, err = awaitN(t, rt, p.Read(rest))
		require.NoError(t, err)
		assert.Equal(t, "next", string(rest[:n]))
		_, err = awaitClose(t, rt, p.Close())
		require.NoError(t, err)
	})
}
