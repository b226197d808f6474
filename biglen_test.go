package blitz_test

import (
	"context"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// Buffers longer than 4 GiB: a length passed to the kernel as 32 bits is
// cut (4 GiB to 0, 4 GiB + 16 to 16), and every backend moves at most
// backend.MaxRW bytes an operation, so the runtime's loops (WriteAll,
// File.Write and WriteAt) must go on after the short counts. The buffers
// are mapped and never touched, so they cost address space, not memory.
const (
	fourGiB = uint64(1) << 32
	over4G  = fourGiB + 16
)

// bigBuf maps n bytes that are never touched (but for the pages an
// operation writes into), unmapped at the end of the test; it skips the
// test where the address space or the system cannot give them. Call it
// before newRuntime, so that the runtime (and any I/O still in flight on
// the buffer) is shut down before the buffer goes.
func bigBuf(t *testing.T, n uint64, writable bool) []byte {
	t.Helper()
	if n > math.MaxInt {
		t.Skipf("a %d-byte buffer does not fit this address space", n)
	}
	b, err := mapBig(int(n), writable)
	if err != nil {
		t.Skipf("cannot map a %d-byte buffer here: %v", n, err)
	}
	t.Cleanup(func() { require.NoError(t, unmapBig(b)) })
	return b
}

// forEachForcedBackend is forEachBackend without the automatic choice,
// which is one of the others: for the tests too slow to run twice on one.
func forEachForcedBackend(t *testing.T, f func(t *testing.T, cfg blitz.Config)) {
	for _, name := range ioBackends(t) {
		if name == blitz.BackendAuto {
			continue
		}
		t.Run(name, func(t *testing.T) { f(t, blitz.Config{Backend: name}) })
	}
}

// dialPeer connects a TCPStream of rt to a plain net listener and returns
// both ends, closed at the end of the test.
func dialPeer(t *testing.T, rt *blitz.Runtime) (*blitz.TCPStream, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	s := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), ln.Addr().String(), 10*time.Second))))
	t.Cleanup(func() { _ = s.Close() })
	conn, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return s, conn
}

// TestBigLenTCPRead: a Read into a 4 GiB buffer returns the data waiting,
// and the data that comes while it waits, rather than (0, io.EOF) on a
// live connection.
func TestBigLenTCPRead(t *testing.T) {
	buf := bigBuf(t, fourGiB, true)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		s, conn := dialPeer(t, rt)
		_, err := conn.Write([]byte("hello"))
		require.NoError(t, err)
		time.Sleep(10 * time.Millisecond) // let it arrive
		rf := s.Read(buf)
		r := await(t, rt, future.Future[future.Result[int]](rf))
		require.NoError(t, r.Err, "Read into 4 GiB with data waiting")
		require.Equal(t, 5, r.Value)
		assert.Equal(t, "hello", string(buf[:5]))

		rf = s.Read(buf)
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](rf))
		time.Sleep(20 * time.Millisecond) // let it wait
		_, err = conn.Write([]byte("later"))
		require.NoError(t, err)
		r, err = h.Wait(testCtx(t))
		require.NoError(t, err)
		require.NoError(t, r.Err, "Read into 4 GiB waiting for the data")
		require.Equal(t, 5, r.Value)
		assert.Equal(t, "later", string(buf[:5]))
	})
}

// TestBigLenFileWriteNull: File.Write, WriteAt and WritevAt of 4 GiB + 16
// bytes to the null device (which takes everything at no cost) write it
// all, in as many operations as it takes, rather than stopping with
// io.ErrShortWrite after a short one.
func TestBigLenFileWriteNull(t *testing.T) {
	buf := bigBuf(t, over4G, false)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		f, err := awaitOpen(t, rt, blitz.OpenFile(os.DevNull, os.O_WRONLY, 0))
		if err != nil {
			t.Skipf("no null device to write to: %v", err)
		}
		defer awaitClose(t, rt, f.Close())
		small := []byte("0123456789")
		for what, op := range map[string]func() *blitz.FileIOFuture{
			"Write":    func() *blitz.FileIOFuture { return f.Write(buf) },
			"WriteAt":  func() *blitz.FileIOFuture { return f.WriteAt(buf, 0) },
			"WritevAt": func() *blitz.FileIOFuture { return f.WritevAt([][]byte{small, buf, small}, 0) },
		} {
			want := len(buf)
			if what == "WritevAt" {
				want += 2 * len(small)
			}
			start := time.Now()
			// The first write of the buffer pages all of it in (4 GiB: 14 s
			// under Wine on a quiet 2-core machine), so it gets more than
			// testCtx's 20 s.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			r, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[int]](op()))
			cancel()
			require.NoError(t, err, what)
			n, err := r.Value, r.Err
			require.NoError(t, err, what)
			require.Equal(t, want, n, what)
			t.Logf("%s of %d bytes to %s: %v", what, want, os.DevNull, time.Since(start))
		}
	})
}

// TestBigLenFileReadAt: ReadAt and Read into a 4 GiB buffer read the whole
// 5-byte file.
func TestBigLenFileReadAt(t *testing.T) {
	buf := bigBuf(t, fourGiB, true)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		name := filepath.Join(fsTempDir(t), "hello")
		require.NoError(t, os.WriteFile(name, []byte("hello"), 0o600))
		f, err := awaitOpen(t, rt, blitz.Open(name))
		require.NoError(t, err)
		defer awaitClose(t, rt, f.Close())
		n, err := awaitN(t, rt, f.ReadAt(buf, 0))
		assert.Equal(t, 5, n)
		assert.ErrorIs(t, err, io.EOF, "ReadAt past the end of the file")
		assert.Equal(t, "hello", string(buf[:5]))
		clear(buf[:5])
		n, err = awaitN(t, rt, f.Read(buf))
		require.NoError(t, err)
		assert.Equal(t, 5, n)
		assert.Equal(t, "hello", string(buf[:5]))
	})
}

// TestBigLenTCPWriteAll: WriteAll of 4 GiB + 16 bytes through a loopback
// connection delivers every byte to a reader that counts them. It moves
// 4 GiB on each backend, so it does not run with -short; a watchdog ends
// it when the reader sees no byte for 20 seconds (a WriteAll that spins
// without sending).
func TestBigLenTCPWriteAll(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 4 GiB through loopback on each backend")
	}
	buf := bigBuf(t, over4G, false)
	forEachForcedBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		s, conn := dialPeer(t, rt)
		var got atomic.Int64
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			b := make([]byte, 1<<20)
			for {
				n, err := conn.Read(b)
				got.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stalled := make(chan int64, 1)
		go watchProgress(ctx, cancel, &got, 20*time.Second, stalled)

		start := time.Now()
		wa := s.WriteAll(buf)
		r, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[int]](wa))
		el := time.Since(start)
		select {
		case at := <-stalled:
			t.Fatalf("WriteAll of %d bytes made no progress for 20 s after %d bytes reached the reader (%v)", len(buf), at, el)
		default:
		}
		require.NoError(t, err)
		require.NoError(t, r.Err)
		require.Equal(t, len(buf), r.Value)
		require.NoError(t, s.CloseWrite())
		select {
		case <-readDone:
		case <-time.After(time.Minute):
			t.Fatalf("the reader did not see the end of the stream; it has %d bytes", got.Load())
		}
		require.Equal(t, int64(len(buf)), got.Load(), "bytes the reader counted")
		t.Logf("WriteAll of %d bytes through loopback on %s: %v (%.0f MB/s)", len(buf), cfg.Backend, el, float64(len(buf))/el.Seconds()/1e6)
	})
}

// watchProgress cancels the operation (cancel) and reports the count on
// stalled when *count has not moved for quiet, until ctx ends.
func watchProgress(ctx context.Context, cancel func(), count *atomic.Int64, quiet time.Duration, stalled chan<- int64) {
	last, since := count.Load(), time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n := count.Load(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > quiet {
			stalled <- n
			cancel()
			return
		}
	}
}

// awaitLong runs a File data operation from the test goroutine with five
// minutes to complete: the big writes move gigabytes to disk.
func awaitLong(t *testing.T, rt *blitz.Runtime, f *blitz.FileIOFuture) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[int]](f))
	require.NoError(t, err)
	return r.Value, r.Err
}
