package blitz_test

import (
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadPooled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		rp := s.ReadPooled()
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[blitz.PooledBuf]](rp))
		time.Sleep(5 * time.Millisecond) // the read waits holding no buffer
		_, err := peer.Write([]byte("pooled data"))
		require.NoError(t, err)
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		b := ok(t, r)
		assert.Equal(t, "pooled data", string(b.Bytes()))
		b.Release()

		require.NoError(t, peer.Close())
		rp2 := s.ReadPooled()
		assert.Equal(t, io.EOF, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp2)).Err)
	})
}

// With a pool of one buffer held by one connection, a pooled read on
// another falls back to a buffer of its own and loses nothing.
func TestReadPooledPoolEmpty(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.ReadBufferCount, cfg.ReadBufferSize = 1, 16
		rt := newRuntime(t, cfg)
		s1, p1 := tcpPair(t, rt)
		s2, p2 := tcpPair(t, rt)
		_, _ = p1.Write([]byte("first"))
		rp1 := s1.ReadPooled()
		held := ok(t, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp1)))
		assert.Equal(t, "first", string(held.Bytes()))
		_, _ = p2.Write([]byte("second"))
		rp2 := s2.ReadPooled()
		b := ok(t, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp2)))
		assert.Equal(t, "second", string(b.Bytes()))
		b.Release()
		held.Release()
		// The pool works again.
		_, _ = p2.Write([]byte("third"))
		rp3 := s2.ReadPooled()
		b3 := ok(t, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp3)))
		assert.Equal(t, "third", string(b3.Bytes()))
		b3.Release()
	})
}

// sendPaced writes total bytes (a multiple of 20) to peer in writes of 20,
// pausing 0, 200 or 400 µs after each, from a goroutine of its own, closing
// peer at the end if closeAfter; it returns what it writes.
func sendPaced(peer net.Conn, total int, closeAfter bool) []byte {
	want := make([]byte, total)
	for i := range want {
		want[i] = byte(i * 7)
	}
	go func() {
		for i := 0; i < total; i += 20 {
			_, _ = peer.Write(want[i : i+20])
			time.Sleep(time.Duration(i%3) * 200 * time.Microsecond)
		}
		if closeAfter {
			_ = peer.Close()
		}
	}()
	return want
}

// A cancelled pooled read's data goes to the next read, whichever kind.
func TestReadPooledCancelledDataKept(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		total := 600
		if testing.Short() {
			total = 200
		}
		want := sendPaced(peer, total, false)
		var got []byte
		buf := make([]byte, 64)
		for i := 0; len(got) < total; i++ {
			if i%2 == 0 {
				rp := s.ReadPooled()
				r := await(t, rt, blitz.Timeout(100*time.Microsecond, future.Future[future.Result[blitz.PooledBuf]](rp)))
				if r.Err == nil {
					b := ok(t, r.Value)
					got = append(got, b.Bytes()...)
					b.Release()
				}
				continue
			}
			rd := s.Read(buf)
			r := await(t, rt, blitz.Timeout(100*time.Microsecond, future.Future[future.Result[int]](rd)))
			if r.Err == nil {
				got = append(got, buf[:ok(t, r.Value)]...)
			}
		}
		assert.Equal(t, want, got)
	})
}

// A burst of pooled reads with data already waiting, more than the pool
// gave the kernel at first, grows the pool rather than giving reads
// buffers of their own: the burst allocates far less than a buffer per
// read. (On io_uring the pool starts with 64 buffers in the kernel's ring
// and a receive that finds it empty reports so; the read tries the pool
// again once the backend has grown it.)
func TestReadPooledBurstGrowsThePool(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		const reads, size = 200, 4096
		cfg.ReadBufferCount, cfg.ReadBufferSize = 256, size
		cfg.Workers = 1
		rt := newRuntime(t, cfg)
		streams := make([]*blitz.TCPStream, reads)
		for i := range streams {
			s, peer := tcpPair(t, rt)
			_, err := peer.Write([]byte("waiting"))
			require.NoError(t, err)
			streams[i] = s
		}
		time.Sleep(20 * time.Millisecond) // the data is in every socket
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		bufs := await(t, rt, future.Future[[]blitz.PooledBuf](&burst{streams: streams}))
		runtime.ReadMemStats(&after)
		for i, b := range bufs {
			require.Equal(t, "waiting", string(b.Bytes()), "read %d", i)
			b.Release()
		}
		// The pool's own memory is made as it first gives buffers out: at
		// most its 256 buffers. Buffers of the reads' own would add
		// another 4 KiB each (about 160 of them on io_uring before the
		// retry, 1.7 MB in all); the operations' records take the rest
		// (about 0.2 MB on IOCP).
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%d reads allocated %d bytes", reads, allocated)
		require.Less(t, allocated, uint64(cfg.ReadBufferCount*size+reads*size/2), "the reads took buffers of their own")
	})
}

// burst polls a pooled read on every stream, all in flight at once, and
// completes with their buffers, held, once all are in.
type burst struct {
	streams []*blitz.TCPStream
	reads   []*blitz.ReadPooledFuture
	bufs    []blitz.PooledBuf
	n       int
}

func (b *burst) Poll(cx *future.Context) ([]blitz.PooledBuf, bool) {
	if b.reads == nil {
		b.reads = make([]*blitz.ReadPooledFuture, len(b.streams))
		b.bufs = make([]blitz.PooledBuf, len(b.streams))
		for i, s := range b.streams {
			b.reads[i] = s.ReadPooled()
		}
	}
	for i, r := range b.reads {
		if r == nil {
			continue
		}
		res, ok := r.Poll(cx)
		if !ok {
			continue
		}
		if res.Err != nil {
			panic(res.Err)
		}
		b.bufs[i], b.reads[i] = res.Value, nil
		b.n++
	}
	return b.bufs, b.n == len(b.reads)
}

// pollPooled reads once with PollReadPooled; its Cancel is the stream's
// CancelRead, as a protocol's reader would call it.
type pollPooled struct{ s *blitz.TCPStream }

func (p *pollPooled) Poll(cx *future.Context) (future.Result[blitz.PooledBuf], bool) {
	return p.s.PollReadPooled(cx)
}
func (p *pollPooled) Cancel() { p.s.CancelRead() }

// pollPlain reads once into buf with PollRead, cancelled the same way.
type pollPlain struct {
	s   *blitz.TCPStream
	buf []byte
}

func (p *pollPlain) Poll(cx *future.Context) (future.Result[int], bool) {
	return p.s.PollRead(cx, p.buf)
}
func (p *pollPlain) Cancel() { p.s.CancelRead() }

// PollReadPooled reads in order through reads that time out and are
// cancelled with CancelRead, alternating with PollRead and ReadPooled:
// nothing a cancelled read received is lost, and the stream's end is
// io.EOF.
func TestPollReadPooled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		total := 1200
		if testing.Short() {
			total = 300
		}
		want := sendPaced(peer, total, true)
		var got []byte
		buf := make([]byte, 64)
		timedOut := 0
		// pooled awaits a pooled read for 100 µs, keeping what it returns.
		pooled := func(f future.Future[future.Result[blitz.PooledBuf]]) error {
			r := await(t, rt, blitz.Timeout(100*time.Microsecond, f))
			if r.Err != nil {
				return r.Err
			}
			if r.Value.Err != nil {
				return r.Value.Err
			}
			got = append(got, r.Value.Value.Bytes()...)
			r.Value.Value.Release()
			return nil
		}
		for i := 0; ; i++ {
			var err error
			switch i % 4 {
			case 0, 1: // the stream's own pooled read, twice in a row
				err = pooled(&pollPooled{s: s})
			case 2:
				r := await(t, rt, blitz.Timeout(100*time.Microsecond, future.Future[future.Result[int]](&pollPlain{s: s, buf: buf})))
				if err = r.Err; err == nil {
					if err = r.Value.Err; err == nil {
						got = append(got, buf[:r.Value.Value]...)
					}
				}
			case 3:
				err = pooled(s.ReadPooled())
			}
			if err == io.EOF {
				break
			}
			if err != nil && !errors.Is(err, blitz.ErrTimeout) {
				t.Fatalf("read %d: %v", i, err)
			}
			if err != nil {
				timedOut++
			}
		}
		assert.Equal(t, want, got)
		t.Logf("%d reads cancelled", timedOut)
	})
}

// PollReadPooled on a closed stream fails with ErrClosed (net.ErrClosed
// too) instead of waiting; at the end of the stream it returns io.EOF
// again at every call; CancelRead with no read in flight does nothing.
func TestPollReadPooledEndAndClose(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		s.CancelRead() // nothing in flight
		_, _ = peer.Write([]byte("last"))
		require.NoError(t, peer.Close())
		var got []byte
		for {
			r := await(t, rt, future.Future[future.Result[blitz.PooledBuf]](&pollPooled{s: s}))
			if r.Err != nil {
				require.ErrorIs(t, r.Err, io.EOF)
				break
			}
			got = append(got, r.Value.Bytes()...)
			r.Value.Release()
		}
		assert.Equal(t, "last", string(got))
		r := await(t, rt, future.Future[future.Result[blitz.PooledBuf]](&pollPooled{s: s}))
		assert.ErrorIs(t, r.Err, io.EOF, "a second read at the end")

		s2, _ := tcpPair(t, rt)
		require.NoError(t, s2.Close())
		r = await(t, rt, future.Future[future.Result[blitz.PooledBuf]](&pollPooled{s: s2}))
		assert.ErrorIs(t, r.Err, blitz.ErrClosed)
		assert.ErrorIs(t, r.Err, net.ErrClosed)
	})
}
