package runtime_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/runtime"
)

// TestFileRingPath: with io_uring the data operations take the ring; with
// epoll the blocking pool.
func TestFileRingPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
		rt := newRuntime(t, cfg)
		f, err := awaitOpen(t, rt, runtime.Create(filepath.Join(fsTempDir(t), "f")))
		require.NoError(t, err)
		assert.Equal(t, rt.Backend() == runtime.BackendURing, runtime.FileOnRing(f), rt.Backend())
		_, err = awaitClose(t, rt, f.Close())
		require.NoError(t, err)
	})
}

// fifo opens a named pipe for reading and writing (so that the open does
// not wait for a peer), whose reads wait until something is written.
func fifo(t *testing.T, rt *runtime.Runtime) (*runtime.File, *os.File) {
	t.Helper()
	name := filepath.Join(fsTempDir(t), "fifo")
	require.NoError(t, unix.Mkfifo(name, 0o600))
	f, err := awaitOpen(t, rt, runtime.OpenFile(name, os.O_RDWR, 0))
	require.NoError(t, err)
	w, err := os.OpenFile(name, os.O_WRONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return f, w
}

// TestFileCloseWaitsForRing: Close waits until the io_uring read in flight
// has completed, and operations after it fail with fs.ErrClosed.
func TestFileCloseWaitsForRing(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Backend: runtime.BackendURing})
	f, w := fifo(t, rt)
	require.True(t, runtime.FileOnRing(f))
	buf := make([]byte, 16)
	read := runtime.SpawnOn(rt.Handle(), future.Future[future.Result[int]](f.Read(buf)))
	time.Sleep(20 * time.Millisecond) // the read is in the kernel
	closed := runtime.SpawnOn(rt.Handle(), future.Future[future.Result[struct{}]](f.Close()))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := closed.Wait(ctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "Close waits for the read")

	_, err = w.Write([]byte("late"))
	require.NoError(t, err)
	r, err := read.Wait(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, r.Err)
	assert.Equal(t, "late", string(buf[:r.Value]))
	c, err := closed.Wait(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, c.Err)

	_, err = awaitN(t, rt, f.Read(buf))
	require.ErrorIs(t, err, fs.ErrClosed)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
}

// TestFileCancelRingRead: a cancelled read in flight is cancelled in the
// kernel, and Close then completes without data ever arriving.
func TestFileCancelRingRead(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Backend: runtime.BackendURing})
	f, _ := fifo(t, rt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := runtime.BlockOn(ctx, rt.Handle(), future.Future[future.Result[int]](f.Read(make([]byte, 8))))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	_, err := awaitClose(t, rt, f.Close())
	require.NoError(t, err, "the cancelled read's completion let Close through")
}
