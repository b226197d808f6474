package blitz_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// fdOpen reports whether fd is an open descriptor of this process.
func fdOpen(fd backend.FD) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// eventually waits up to 5 s for cond.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		goruntime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFileCloseOnRing: a file the ring opened is closed by an io_uring
// close; a second Close fails with fs.ErrClosed, as os.File's does, and so
// do later operations.
func TestFileCloseOnRing(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	name := filepath.Join(fsTempDir(t), "f")
	f, err := awaitOpen(t, rt, blitz.Create(name))
	require.NoError(t, err)
	require.True(t, blitz.FileOwnsFD(f))
	fd := blitz.FileFD(f)
	require.True(t, fdOpen(fd))
	_, err = awaitN(t, rt, f.Write([]byte("hello")))
	require.NoError(t, err)

	before := blitz.RingFileCloses()
	_, err = awaitClose(t, rt, f.Close())
	require.NoError(t, err)
	assert.Equal(t, before+1, blitz.RingFileCloses(), "one io_uring close")
	assert.False(t, fdOpen(fd), "the descriptor is closed when Close returns")

	_, err = awaitClose(t, rt, f.Close())
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "close", pe.Op)
	assert.Equal(t, name, pe.Path)
	assert.ErrorIs(t, err, fs.ErrClosed)
	_, err = awaitN(t, rt, f.Write([]byte("x")))
	assert.ErrorIs(t, err, fs.ErrClosed)
	_, err = awaitR[int64](t, rt, f.SeekTo(0, 0))
	assert.ErrorIs(t, err, fs.ErrClosed)
	assert.Nil(t, f.OS(), "no os.File for a closed file")

	data, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(data))
}

// TestFileOSHandsOver: OS gives the descriptor to an *os.File, which works
// and which Close then closes (on the pool, not the ring).
func TestFileOSHandsOver(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	name := filepath.Join(fsTempDir(t), "f")
	require.NoError(t, os.WriteFile(name, []byte("contents"), 0o600))
	f, err := awaitOpen(t, rt, blitz.Open(name))
	require.NoError(t, err)
	osf := f.OS()
	require.NotNil(t, osf)
	assert.Same(t, osf, f.OS(), "one os.File")
	assert.False(t, blitz.FileOwnsFD(f))
	assert.Equal(t, uintptr(blitz.FileFD(f)), osf.Fd())
	buf := make([]byte, 8)
	n, err := osf.ReadAt(buf, 0)
	require.NoError(t, err)
	assert.Equal(t, "contents", string(buf[:n]))
	n, err = awaitN(t, rt, f.ReadAt(buf[:3], 5))
	require.NoError(t, err, "the ring still reads the handed-out descriptor")
	assert.Equal(t, "nts", string(buf[:n]))

	before := blitz.RingFileCloses()
	_, err = awaitClose(t, rt, f.Close())
	require.NoError(t, err)
	assert.Equal(t, before, blitz.RingFileCloses(), "closed through the os.File")
	_, err = osf.Stat()
	assert.ErrorIs(t, err, fs.ErrClosed, "the os.File knows it is closed")
}

// TestFileSeekAndPoolFallbacksOnOwnedFD: SeekTo and the pool fallbacks of
// Sync, Stat and Truncate work on a descriptor the File owns.
func TestFileSeekAndPoolFallbacksOnOwnedFD(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	name := filepath.Join(fsTempDir(t), "f")
	f, err := awaitOpen(t, rt, blitz.Create(name))
	require.NoError(t, err)
	require.True(t, blitz.FileOwnsFD(f))
	_, err = awaitN(t, rt, f.Write([]byte("0123456789")))
	require.NoError(t, err)
	pos, err := awaitR[int64](t, rt, f.SeekTo(2, 0))
	require.NoError(t, err)
	assert.Equal(t, int64(2), pos)
	buf := make([]byte, 3)
	n, err := awaitN(t, rt, f.Read(buf))
	require.NoError(t, err)
	assert.Equal(t, "234", string(buf[:n]))

	blitz.NoRingFileOps(f) // Sync, Stat and Truncate take the pool
	_, err = awaitR[struct{}](t, rt, f.Truncate(4))
	require.NoError(t, err)
	_, err = awaitR[struct{}](t, rt, f.Sync())
	require.NoError(t, err)
	fi, err := awaitStat(t, rt, f)
	require.NoError(t, err)
	want, err := os.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, int64(4), fi.Size())
	assert.Equal(t, want.Mode(), fi.Mode())
	assert.Equal(t, want.ModTime(), fi.ModTime())
	assert.Equal(t, "f", fi.Name())
	_, err = awaitClose(t, rt, f.Close())
	require.NoError(t, err)
	_, err = awaitStat(t, rt, f)
	assert.ErrorIs(t, err, fs.ErrClosed)
}

// TestFileCancelledCloseStillCloses: a Close cancelled while a read is in
// flight closes the descriptor once that read completes; one cancelled
// before its first poll closes it at once.
func TestFileCancelledCloseStillCloses(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	f, w := fifo(t, rt)
	fd := blitz.FileFD(f)
	buf := make([]byte, 8)
	read := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](f.Read(buf)))
	time.Sleep(20 * time.Millisecond) // the read is in the kernel
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[struct{}]](f.Close()))
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "Close waits for the read")
	assert.True(t, fdOpen(fd), "not closed under the read")
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	r, err := read.Wait(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, r.Err)
	eventually(t, func() bool { return !fdOpen(fd) }, "the cancelled Close never closed the descriptor")

	g, err := awaitOpen(t, rt, blitz.Open(w.Name()))
	require.NoError(t, err)
	gfd := blitz.FileFD(g)
	g.Close().Cancel()
	eventually(t, func() bool { return !fdOpen(gfd) }, "a Close cancelled before its first poll did not close")
}

// TestFileUnclosedIsClosedByGC: a ring-owned File dropped without Close
// has its descriptor closed by the garbage collector, as an os.File has.
func TestFileUnclosedIsClosedByGC(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	name := filepath.Join(fsTempDir(t), "f")
	require.NoError(t, os.WriteFile(name, nil, 0o600))
	fd := func() backend.FD {
		f, err := awaitOpen(t, rt, blitz.Open(name))
		require.NoError(t, err)
		return blitz.FileFD(f)
	}()
	require.True(t, fdOpen(fd))
	eventually(t, func() bool { return !fdOpen(fd) }, "the unreachable File's descriptor stayed open")
}
