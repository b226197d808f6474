package blitz_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// TestFileRingPath: with io_uring the data operations take the ring; with
// epoll the blocking pool.
func TestFileRingPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		f, err := awaitOpen(t, rt, blitz.Create(filepath.Join(fsTempDir(t), "f")))
		require.NoError(t, err)
		assert.Equal(t, rt.Backend() == blitz.BackendURing, blitz.FileOnRing(f), rt.Backend())
		_, err = awaitClose(t, rt, f.Close())
		require.NoError(t, err)
	})
}

// fifo opens a named pipe for reading and writing (so that the open does
// not wait for a peer), whose reads wait until something is written.
func fifo(t *testing.T, rt *blitz.Runtime) (*blitz.File, *os.File) {
	t.Helper()
	name := filepath.Join(fsTempDir(t), "fifo")
	require.NoError(t, unix.Mkfifo(name, 0o600))
	f, err := awaitOpen(t, rt, blitz.OpenFile(name, os.O_RDWR, 0))
	require.NoError(t, err)
	w, err := os.OpenFile(name, os.O_WRONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return f, w
}

// TestFileCloseWaitsForRing: Close waits until the io_uring read in flight
// has completed, and operations after it fail with fs.ErrClosed.
func TestFileCloseWaitsForRing(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	f, w := fifo(t, rt)
	require.True(t, blitz.FileOnRing(f))
	buf := make([]byte, 16)
	read := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](f.Read(buf)))
	time.Sleep(20 * time.Millisecond) // the read is in the kernel
	closed := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[struct{}]](f.Close()))
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
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	f, _ := fifo(t, rt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[int]](f.Read(make([]byte, 8))))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	_, err := awaitClose(t, rt, f.Close())
	require.NoError(t, err, "the cancelled read's completion let Close through")
}

// ringCounts snapshots blitz.RingFileOps for the four file-system kinds.
func ringCounts() map[backend.Kind]uint64 {
	m := make(map[backend.Kind]uint64)
	for _, k := range []backend.Kind{backend.KindOpenAt, backend.KindFsync, backend.KindStatx, backend.KindFtruncate} {
		m[k] = blitz.RingFileOps(k)
	}
	return m
}

// ringDelta is how many ops of each kind went to a ring since before.
func ringDelta(before map[backend.Kind]uint64) map[backend.Kind]uint64 {
	d := ringCounts()
	for k := range d {
		d[k] -= before[k]
	}
	return d
}

// TestFileRingOpsTaken: on io_uring the open, Sync, Stat and Truncate are
// ring operations, one each; on the other backends none is.
func TestFileRingOpsTaken(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		before := ringCounts()
		name := filepath.Join(fsTempDir(t), "f")
		f, err := awaitOpen(t, rt, blitz.Create(name))
		require.NoError(t, err)
		_, err = awaitN(t, rt, f.Write([]byte("0123456789")))
		require.NoError(t, err)
		_, err = awaitR[struct{}](t, rt, f.Sync())
		require.NoError(t, err)
		_, err = awaitR[struct{}](t, rt, f.Truncate(4))
		require.NoError(t, err)
		fi, err := awaitStat(t, rt, f)
		require.NoError(t, err)
		assert.Equal(t, int64(4), fi.Size())
		sameStat(t, name, fi)
		_, err = awaitClose(t, rt, f.Close())
		require.NoError(t, err)

		one := uint64(0)
		if rt.Backend() == blitz.BackendURing {
			one = 1
		}
		assert.Equal(t, map[backend.Kind]uint64{backend.KindOpenAt: one, backend.KindFsync: one,
			backend.KindStatx: one, backend.KindFtruncate: one}, ringDelta(before), rt.Backend())
	})
}

// TestFileRingFallbacks: on io_uring, what the ring does not serve runs on
// the pool with the same result: a Truncate without IORING_OP_FTRUNCATE,
// an open with flags the backend has no word for (O_SYNC).
func TestFileRingFallbacks(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	name := filepath.Join(fsTempDir(t), "f")
	before := ringCounts()
	f, err := awaitOpen(t, rt, blitz.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_SYNC, 0o600))
	require.NoError(t, err)
	require.True(t, blitz.FileOnRing(f), "a file opened on the pool still gets its ring side")
	blitz.NoRingTruncate(f)
	_, err = awaitN(t, rt, f.WriteAt([]byte("0123456789"), 0))
	require.NoError(t, err)
	_, err = awaitR[struct{}](t, rt, f.Truncate(3))
	require.NoError(t, err)
	fi, err := os.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, int64(3), fi.Size())
	_, err = awaitClose(t, rt, f.Close())
	require.NoError(t, err)
	assert.Equal(t, map[backend.Kind]uint64{backend.KindOpenAt: 0, backend.KindFsync: 0,
		backend.KindStatx: 0, backend.KindFtruncate: 0}, ringDelta(before))
}

// TestFileStatKindsLikeOS: File.Stat of a FIFO and of a file with the
// setuid, setgid and sticky bits equals os.Stat, on every backend.
func TestFileStatKindsLikeOS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		dir := fsTempDir(t)
		special := filepath.Join(dir, "special")
		require.NoError(t, os.WriteFile(special, []byte("x"), 0o600))
		require.NoError(t, os.Chmod(special, 0o750|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		f, _ := fifo(t, rt)
		for _, g := range []*blitz.File{f, mustOpen(t, rt, special)} {
			fi, err := awaitStat(t, rt, g)
			require.NoError(t, err)
			sameStat(t, g.Name(), fi)
			_, err = awaitClose(t, rt, g.Close())
			require.NoError(t, err)
		}
	})
}

// mustOpen opens name for reading.
func mustOpen(t *testing.T, rt *blitz.Runtime, name string) *blitz.File {
	t.Helper()
	f, err := awaitOpen(t, rt, blitz.Open(name))
	require.NoError(t, err)
	return f
}

// pollOnceThenCancel polls an open once (on io_uring: submits the openat)
// and cancels it at once, in the same task: the descriptor, whether it
// arrives before or after the cancel, must be closed.
type pollOnceThenCancel struct{ o *blitz.OpenFuture }

func (p *pollOnceThenCancel) Poll(cx *future.Context) (bool, bool) {
	_, done := p.o.Poll(cx)
	if done {
		return false, true // opened within the first poll: the test fails
	}
	p.o.Cancel()
	return true, true
}

// openFDs is the number of descriptors this process has open.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(es)
}

// TestFileOpenCancelClosesFD: cancelled opens on io_uring leave no
// descriptor behind, whether the openat completed before the cancel (the
// future closes it) or after (the completion does).
func TestFileOpenCancelClosesFD(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing, Workers: 2})
	name := filepath.Join(fsTempDir(t), "f")
	require.NoError(t, os.WriteFile(name, []byte("x"), 0o600))
	base := openFDs(t)
	before := blitz.RingFileOps(backend.KindOpenAt)
	const rounds = 300
	for range rounds {
		h := blitz.SpawnOn(rt.Handle(), future.Future[bool](&pollOnceThenCancel{o: blitz.Open(name)}))
		cancelled, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		require.True(t, cancelled, "an openat does not complete within its first poll")
	}
	assert.Equal(t, uint64(rounds), blitz.RingFileOps(backend.KindOpenAt)-before, "the opens took the ring")
	require.Eventually(t, func() bool { return openFDs(t) <= base }, 5*time.Second, 10*time.Millisecond,
		"descriptors of cancelled opens leaked: %d open, %d before", openFDs(t), base)
}

// TestFileOpenCancelWaiting: an open that waits in the kernel (a FIFO
// without a writer, opened with O_CREATE so that io_uring blocks) is
// cancelled, and the runtime shuts down cleanly after.
func TestFileOpenCancelWaiting(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	name := filepath.Join(fsTempDir(t), "fifo")
	require.NoError(t, unix.Mkfifo(name, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[*blitz.File]](blitz.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o600)))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// The abandoned open is cancelled in the kernel: a writer now finds no
	// reader (ENXIO with O_NONBLOCK) once its completion has arrived.
	require.Eventually(t, func() bool {
		w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
		}
		return errors.Is(err, syscall.ENXIO)
	}, 5*time.Second, 10*time.Millisecond)
}

// TestFileReadCachedSkipsTheRing: reads of cached data are made at once
// with RWF_NOWAIT, positional and at the file position alike, and give
// what os gives; a FIFO with nothing in it misses (or has no RWF_NOWAIT)
// and its read goes to the ring.
func TestFileReadCachedSkipsTheRing(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	data := randomBytes(64<<10, 9)
	name := filepath.Join(fsTempDir(t), "cached")
	require.NoError(t, os.WriteFile(name, data, 0o600)) // just written: in the page cache
	f, err := awaitOpen(t, rt, blitz.Open(name))
	require.NoError(t, err)
	if !blitz.FileOnRing(f) {
		t.Skip("no io_uring here")
	}
	buf := make([]byte, 4096)
	for i := range 16 {
		fut := f.ReadAt(buf, int64(i)*4096)
		n, err := awaitN(t, rt, fut)
		require.NoError(t, err)
		require.Equal(t, data[i*4096:i*4096+n], buf[:n])
		assert.False(t, blitz.UsedRing(fut), "a cached read skips the ring")
	}
	fut := f.Read(buf) // at the file position
	n, err := awaitN(t, rt, fut)
	require.NoError(t, err)
	require.Equal(t, data[:n], buf[:n])
	assert.False(t, blitz.UsedRing(fut), "a cached read skips the ring")
	all, err := awaitR[[]byte](t, rt, blitz.ReadToEnd(f))
	require.NoError(t, err)
	require.Equal(t, data[n:], all)
	_, err = awaitClose(t, rt, f.Close())
	require.NoError(t, err)

	p, w := fifo(t, rt)
	fut = p.Read(buf)
	done, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[bool](&pollOnce{f: fut}))
	require.NoError(t, err)
	require.False(t, done, "an empty FIFO has nothing to read")
	_, err = w.Write([]byte("fifo"))
	require.NoError(t, err)
	n, err = awaitN(t, rt, fut)
	require.NoError(t, err)
	assert.Equal(t, "fifo", string(buf[:n]))
	for range 8 {
		res, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(time.Millisecond, future.Future[future.Result[int]](p.Read(buf))))
		require.NoError(t, err)
		require.ErrorIs(t, res.Err, blitz.ErrTimeout, "an empty FIFO has nothing to read")
	}
	assert.True(t, blitz.UsedRing(fut), "a FIFO's read waits on the ring")
}

// TestFileReadDirectTakesTheRing: a file opened with O_DIRECT has no page
// cache to read from, so its reads go to the ring instead of a preadv2 with
// RWF_NOWAIT, which would read the disk on the worker and wait for it; the
// data is the file's, by ReadAt and by Read.
func TestFileReadDirectTakesTheRing(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Backend: blitz.BackendURing})
	data := randomBytes(64<<10, 11)
	name := filepath.Join(fsTempDir(t), "direct")
	require.NoError(t, os.WriteFile(name, data, 0o600))
	f, err := awaitOpen(t, rt, blitz.OpenFile(name, os.O_RDONLY|syscall.O_DIRECT, 0))
	if errors.Is(err, syscall.EINVAL) {
		t.Skip("no O_DIRECT on this filesystem")
	}
	require.NoError(t, err)
	defer awaitClose(t, rt, f.Close())
	if !blitz.FileOnRing(f) {
		t.Skip("no io_uring here")
	}
	buf := alignedBlock(t, 4096)
	for i := range 8 {
		fut := f.ReadAt(buf, int64(i)*4096)
		n, err := awaitN(t, rt, fut)
		require.NoError(t, err)
		require.Equal(t, data[i*4096:(i+1)*4096], buf[:n])
		assert.True(t, blitz.UsedRing(fut), "read %d of an O_DIRECT file skipped the ring", i)
	}
	fut := f.Read(buf)
	n, err := awaitN(t, rt, fut)
	require.NoError(t, err)
	require.Equal(t, data[:n], buf[:n])
	assert.True(t, blitz.UsedRing(fut), "a Read of an O_DIRECT file skipped the ring")
}

// alignedBlock is n bytes aligned on a 4 KiB boundary, as O_DIRECT needs.
func alignedBlock(t *testing.T, n int) []byte {
	t.Helper()
	mem := make([]byte, n+4096)
	off := (4096 - int(uintptr(unsafe.Pointer(&mem[0]))%4096)) % 4096
	return mem[off : off+n : off+n]
}
