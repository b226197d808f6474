package blitz_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// The futures of a File's operations are the File's, reused by its next
// operations once their task is done with them (see File.Read). These tests
// hold the reuse to that: a future is reused only after it completed or was
// cancelled with nothing in flight, never while another operation may
// still reach it.

// createOn creates a file in a new temporary directory on rt.
func createOn(t *testing.T, rt *blitz.Runtime) *blitz.File {
	t.Helper()
	f, err := awaitOpen(t, rt, blitz.Create(filepath.Join(fsTempDir(t), "f")))
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[struct{}]](f.Close()))
	})
	return f
}

// mustPanicPolledAfterCompletion polls fut and requires the panic of a
// future polled after its completion.
func mustPanicPolledAfterCompletion[T any](t *testing.T, fut future.Future[T]) {
	t.Helper()
	defer func() {
		r := recover()
		err, _ := r.(error)
		require.True(t, errors.Is(err, future.ErrPolledAfterCompletion), "polling a completed future panics with ErrPolledAfterCompletion, got %v", r)
	}()
	fut.Poll(&future.Context{})
}

// TestFileFutureReusedOnlyWhenDone: a completed data operation's future is
// handed out again by the next call; one still pending (not polled yet,
// dropped, in use) never is; polling a completed one, before the next call
// takes it over, panics as a completed future does.
func TestFileFutureReusedOnlyWhenDone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		f := createOn(t, rt)
		msg := []byte("reused futures")

		w := f.WriteAt(msg, 0)
		n, err := awaitN(t, rt, w)
		require.NoError(t, err)
		require.Equal(t, len(msg), n)
		mustPanicPolledAfterCompletion[future.Result[int]](t, w)

		buf := make([]byte, len(msg))
		r := f.ReadAt(buf, 0)
		assert.Same(t, w, r, "the completed WriteAt's future is the next call's")
		pending := f.ReadAt(make([]byte, 4), 0)
		assert.NotSame(t, r, pending, "a future not yet polled is not handed out again")
		n, err = awaitN(t, rt, r)
		require.NoError(t, err)
		assert.Equal(t, msg, buf[:n])

		// pending is dropped without a poll: it is never reused, and the
		// next calls get the completed one instead.
		again := f.ReadAt(buf, 0)
		assert.NotSame(t, pending, again)
		assert.Same(t, r, again)
		n, err = awaitN(t, rt, again)
		require.NoError(t, err)
		assert.Equal(t, msg, buf[:n])
	})
}

// TestFileFutureCancelledReuse: a future cancelled before its operation
// started is handed out again and works as a new one; a vectored operation
// reusing a future keeps the caller's slice of buffers untouched.
func TestFileFutureCancelledReuse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		f := createOn(t, rt)
		c := f.WriteAt([]byte("never written"), 0)
		c.Cancel()
		next := f.WritevAt([][]byte{[]byte("ab"), []byte("cd")}, 0)
		if !blitz.FileOnRing(f) {
			// On the pool a cancelled call may still run: it is not reused.
			assert.NotSame(t, c, next)
		} else {
			assert.Same(t, c, next, "a future cancelled before it started is reused")
		}
		n, err := awaitN(t, rt, next)
		require.NoError(t, err)
		require.Equal(t, 4, n)

		bufs := [][]byte{make([]byte, 1), make([]byte, 3)}
		n, err = awaitN(t, rt, f.ReadvAt(bufs, 0))
		require.NoError(t, err)
		require.Equal(t, 4, n)
		assert.Equal(t, "a", string(bufs[0]))
		assert.Equal(t, "bcd", string(bufs[1]), "the caller's slice keeps its buffers whole")
		n, err = awaitN(t, rt, f.ReadAt(make([]byte, 8), 0))
		assert.Equal(t, 4, n)
		assert.ErrorIs(t, err, io.EOF)
	})
}

// TestFileSyncFutureReused: Sync and Truncate share their futures the same
// way, apart from the data operations'.
func TestFileSyncFutureReused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		f := createOn(t, rt)
		s := f.Sync()
		_, err := awaitR[struct{}](t, rt, s)
		require.NoError(t, err)
		mustPanicPolledAfterCompletion[future.Result[struct{}]](t, s)
		tr := f.Truncate(10)
		assert.Same(t, s, tr)
		pending := f.Sync()
		assert.NotSame(t, tr, pending)
		_, err = awaitR[struct{}](t, rt, tr)
		require.NoError(t, err)
		fi, err := awaitStat(t, rt, f)
		require.NoError(t, err)
		assert.EqualValues(t, 10, fi.Size())
		_, err = awaitR[struct{}](t, rt, pending)
		require.NoError(t, err)
	})
}

// TestFileFuturesConcurrentNeverShared: tasks on several workers calling
// ReadAt and WriteAt on one File at once, handing the futures to one
// another through the File's spares, each read back exactly what they
// wrote (a future shared by two live operations would mix their buffers
// and offsets; under the race detector, their accesses race).
func TestFileFuturesConcurrentNeverShared(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 4
		rt := newRuntime(t, cfg)
		f := createOn(t, rt)
		const tasks = 8
		rounds := 200
		if testing.Short() {
			rounds = 50
		}
		hs := make([]blitz.JoinHandle[error], tasks)
		for i := range hs {
			hs[i] = blitz.SpawnOn(rt.Handle(), future.Future[error](&regionTask{f: f, id: i, rounds: rounds}))
		}
		for _, h := range hs {
			err, werr := h.Wait(testCtx(t))
			require.NoError(t, werr)
			require.NoError(t, err)
		}
	})
}

// regionTask writes its own 64-byte region of the file with WriteAt and
// reads it back with ReadAt, rounds times.
type regionTask struct {
	f          *blitz.File
	id, rounds int
	round      int
	cur        *blitz.FileIOFuture
	reading    bool
	want, got  [64]byte
}

func (r *regionTask) Poll(cx *future.Context) (error, bool) {
	off := int64(r.id) * 64
	for r.round < r.rounds {
		if r.cur == nil {
			if !r.reading {
				for i := range r.want {
					r.want[i] = byte(r.id*31 + r.round + i)
				}
				r.cur = r.f.WriteAt(r.want[:], off)
			} else {
				r.cur = r.f.ReadAt(r.got[:], off)
			}
		}
		res, ok := r.cur.Poll(cx)
		if !ok {
			return nil, false
		}
		r.cur = nil
		if res.Err != nil {
			return res.Err, true
		}
		if r.reading {
			if !bytes.Equal(r.got[:], r.want[:]) {
				return fmt.Errorf("task %d round %d: read %x, wrote %x", r.id, r.round, r.got, r.want), true
			}
			r.round++
		}
		r.reading = !r.reading
	}
	return nil, true
}
