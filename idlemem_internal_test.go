package blitz

// The per-connection records an idle server connection holds, kept small.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

// TestIdleConnRecordSizes pins the sizes of the records every idle served
// connection holds, so that a field added to one shows up here with its
// cost (Go rounds each allocation up to its size class: 16, 24, 32, 48,
// 64, ... 128, 144, ...).
func TestIdleConnRecordSizes(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(TCPStream{}), uintptr(48), "TCPStream: the netFD pointer, the reused futures and the PollRead/PollWrite flags")
	require.LessOrEqual(t, unsafe.Sizeof(serveSet{}.conns[0]), uintptr(8), "Serve's record of a handler: its TaskRef")
	require.LessOrEqual(t, unsafe.Sizeof(netFD{}), uintptr(112), "the socket record")
	require.LessOrEqual(t, unsafe.Sizeof(acceptedRecord[TCPStream]{}), uintptr(160), "an accepted connection's stream and socket, one allocation")
	require.LessOrEqual(t, unsafe.Sizeof(recvArm{}), uintptr(48), "the socket's armed receive, in the socket record")
	require.LessOrEqual(t, unsafe.Sizeof(ReadPooledFuture{}), uintptr(32), "a pending pooled read")
	require.LessOrEqual(t, unsafe.Sizeof(PooledBuf{}), uintptr(24), "a PooledBuf, held in a handler's state")
	require.LessOrEqual(t, unsafe.Sizeof(ReadFuture{}), uintptr(48), "a Read, a connection's spare")
	require.LessOrEqual(t, unsafe.Sizeof(WriteFuture{}), uintptr(48), "a Write, a connection's spare (through which PollWrite writes)")
	require.LessOrEqual(t, unsafe.Sizeof(WriteAllFuture{}), uintptr(48), "a WriteAll, made for every response (garbage in the 64-byte class would leave holes among the handlers' state machines)")
}

// TestCompactPeer: an IP address and port survive their compaction into
// the socket record (IPv4, IPv6, an IPv4-mapped IPv6, the extreme ports),
// leave its flags and kind alone, and one with a zone is refused.
func TestCompactPeer(t *testing.T) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:65535", "[::ffff:10.0.0.1]:1", "0.0.0.0:0", "[2001:db8::1]:443", "255.255.255.255:65535"} {
		ap := netip.MustParseAddrPort(s)
		var n netFD
		n.hints.Store(uint32(kindUDP)<<kindShift | fdReadHot | fdClosed)
		require.True(t, n.setPeer(ap), s)
		got, ok := n.peer()
		require.True(t, ok, s)
		require.Equal(t, ap, got, s)
		require.Equal(t, kindUDP, netKind(n.hints.Load()>>kindShift), s)
		require.True(t, n.hint(fdReadHot) && n.hint(fdClosed) && !n.hint(fdNoFast) && !n.hint(fdReadShut), s)
	}
	var n netFD
	require.False(t, n.setPeer(netip.MustParseAddrPort("[fe80::1%eth0]:22")), "a zoned address is not compacted")
	_, ok := n.peer()
	require.False(t, ok)
}

// TestPollStateReleased: a stream read and written through futures
// has no PollRead/PollWrite in flight, and once a PollRead or PollWrite
// completed, the stream keeps no caller's buffer in its futures (an idle
// stream would hold the last buffer alive).
func TestPollStateReleased(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, c := idlePair(t, bk)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := BlockOn(ctx, rt.Handle(), s.WriteAll([]byte("x")))
			require.NoError(t, err)
			require.NoError(t, r.Err)
			require.False(t, s.pollingRead || s.pollingWrite, "no PollRead/PollWrite before the first PollRead or PollWrite")

			out := []byte("ping")
			w, err := BlockOn(ctx, rt.Handle(), future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
				return s.PollWrite(cx, out)
			}))
			require.NoError(t, err)
			require.NoError(t, w.Err)
			_, err = c.Write([]byte("pong"))
			require.NoError(t, err)
			in := make([]byte, 16)
			rd, err := BlockOn(ctx, rt.Handle(), future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
				return s.PollRead(cx, in)
			}))
			require.NoError(t, err)
			require.NoError(t, rd.Err)
			require.False(t, s.pollingRead, "no read in flight")
			require.False(t, s.pollingWrite, "no write in flight")
			require.Nil(t, s.read.buf, "the finished PollRead's buffer is not kept")
			require.Nil(t, s.write, "a finished PollWrite left its WriteFuture in the stream")

			// A stream that called Write keeps that future as its spare,
			// and PollWrite writes through it.
			wbuf := []byte("w")
			wf := s.Write(wbuf)
			r, err = BlockOn(ctx, rt.Handle(), wf)
			require.NoError(t, err)
			require.NoError(t, r.Err)
			w, err = BlockOn(ctx, rt.Handle(), future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
				return s.PollWrite(cx, out)
			}))
			require.NoError(t, err)
			require.NoError(t, w.Err)
			require.Same(t, wf, s.write, "the caller's spare was dropped")
			if b := s.write.buf; b != nil { // the Write's own, where PollWrite sent without the future
				require.Same(t, &wbuf[0], &b[0], "the finished PollWrite's buffer is kept")
			}
		})
	}
}

// TestPollWriteWhenTheSocketIsFull: where PollWrite sends without a
// future first (the backends with a fast path), a socket that takes
// nothing moves the write to the stream's WriteFuture, which waits for room
// and every byte arrives once, in order.
func TestPollWriteWhenTheSocketIsFull(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, c := idlePair(t, bk)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			chunk := make([]byte, 64<<10)
			var sent []byte
			got := make(chan []byte, 1)
			start := make(chan struct{})
			var startOnce sync.Once
			go func() {
				var all []byte
				buf := make([]byte, 64<<10)
				<-start // the peer reads once a write found the socket full
				_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
				for {
					n, err := c.Read(buf)
					all = append(all, buf[:n]...)
					if err != nil {
						got <- all
						return
					}
				}
			}()
			// Fill the socket: the peer reads only once a write found no
			// room (16 MiB is more than loopback sockets buffer).
			pending := 0
			for i := range 256 {
				for j := range chunk {
					chunk[j] = byte(i + j)
				}
				off := 0
				for off < len(chunk) {
					first := true
					w, err := BlockOn(ctx, rt.Handle(), future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
						r, ok := s.PollWrite(cx, chunk[off:])
						if !ok && first {
							pending++
							startOnce.Do(func() { close(start) })
						}
						first = false
						return r, ok
					}))
					require.NoError(t, err)
					require.NoError(t, w.Err)
					require.Positive(t, w.Value)
					sent = append(sent, chunk[off:off+w.Value]...)
					off += w.Value
				}
			}
			startOnce.Do(func() { close(start) })
			require.NoError(t, s.CloseWrite())
			select {
			case all := <-got:
				require.Equal(t, len(sent), len(all))
				require.True(t, bytes.Equal(sent, all), "the peer read other bytes than were written")
			case <-ctx.Done():
				t.Fatal("the peer did not read everything")
			}
			require.Positive(t, pending, "no write waited for room")
			t.Logf("%d of the writes waited for room", pending)
		})
	}
}

// TestPooledBufBytes: a PooledBuf gives back exactly the bytes it was made
// of, with no spare capacity (an append must not write into the pool's
// buffer), and the zero PooledBuf has none.
func TestPooledBufBytes(t *testing.T) {
	require.Nil(t, PooledBuf{}.Bytes())
	PooledBuf{}.Release() // releases nothing
	buf := make([]byte, 64)
	copy(buf, "hello, pool")
	p := pooledBuf(buf[:11], nil, 0)
	require.Equal(t, []byte("hello, pool"), p.Bytes())
	require.Equal(t, 11, cap(p.Bytes()))
	_ = append(p.Bytes(), '!')
	require.Equal(t, byte(0), buf[11], "an append to Bytes copies")
	require.Nil(t, pooledBuf(buf[:0], nil, 0).Bytes())
}

// TestPooledBufAdvance: Advance drops bytes from the front and keeps the
// pool's buffer (its ring and id, which Release gives back), down to no
// data at all; a count past the end leaves none, a negative one panics.
func TestPooledBufAdvance(t *testing.T) {
	buf := []byte("hello, pool")
	r := new(ioRing)
	p := pooledBuf(buf, r, 7)
	require.Equal(t, p, p.Advance(0))
	q := p.Advance(7)
	require.Equal(t, []byte("pool"), q.Bytes())
	require.Equal(t, 4, cap(q.Bytes()))
	require.Same(t, &buf[7], &q.Bytes()[0], "the same buffer, not a copy")
	require.Same(t, r, q.r)
	require.Equal(t, uint16(7), q.id)
	require.Equal(t, []byte("l"), q.Advance(3).Bytes())
	for _, n := range []int{4, 5, math.MaxInt} {
		e := q.Advance(n)
		require.Nil(t, e.Bytes(), "Advance(%d)", n)
		require.Same(t, r, e.r, "the buffer is still there to release")
		require.Equal(t, uint16(7), e.id)
	}
	require.Nil(t, PooledBuf{}.Advance(3).Bytes())
	require.PanicsWithValue(t, "blitz: PooledBuf.Advance: negative count", func() { p.Advance(-1) })
}

// TestAcceptedConnAddrsLazy: an accepted connection reads its addresses
// only when asked (it carries none but its peer's, compact, while it
// serves; RemoteAddr answers from that), they are the right ones, an error after Close still names them
// (Close reads them while the descriptor is still the connection's), and
// a connection reset by its peer still tells who the peer was.
func TestAcceptedConnAddrsLazy(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			_, s, c := idlePair(t, bk)
			require.Nil(t, s.n.knownAddrs(), "no addresses read before they are asked for")
			require.Equal(t, c.LocalAddr().String(), s.RemoteAddr().String())
			require.Nil(t, s.n.knownAddrs(), "RemoteAddr answers from the accept's peer, keeping no record")
			require.Equal(t, c.RemoteAddr().String(), s.LocalAddr().String())
			require.Equal(t, "tcp", s.LocalAddr().Network())

			rt, s2, c2 := idlePair(t, bk)
			require.Nil(t, s2.n.knownAddrs())
			require.NoError(t, s2.Close())
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := BlockOn(ctx, rt.Handle(), s2.Read(make([]byte, 8)))
			require.NoError(t, err)
			require.ErrorIs(t, r.Err, net.ErrClosed)
			var oe *net.OpError
			require.True(t, errors.As(r.Err, &oe))
			require.Equal(t, "tcp", oe.Net)
			require.NotNil(t, oe.Addr, "the error after Close names the peer")
			require.Equal(t, c2.LocalAddr().String(), oe.Addr.String())
			require.Equal(t, c2.RemoteAddr().String(), oe.Source.String())

			// A peer that resets the connection before anything asked for
			// the addresses: the peer's can no longer be read from the
			// system, and RemoteAddr still gives it (read at the accept).
			rt3, s3, c3 := idlePair(t, bk)
			require.Nil(t, s3.n.knownAddrs())
			require.NoError(t, c3.(*net.TCPConn).SetLinger(0))
			want := c3.LocalAddr().String()
			require.NoError(t, c3.Close()) // a reset, with linger 0
			r3, err := BlockOn(ctx, rt3.Handle(), s3.Read(make([]byte, 8)))
			require.NoError(t, err)
			require.Error(t, r3.Err, "a read of a reset connection")
			require.NotNil(t, s3.RemoteAddr(), "RemoteAddr of a reset connection")
			require.Equal(t, want, s3.RemoteAddr().String())
			if errors.As(r3.Err, &oe) {
				require.NotNil(t, oe.Addr, "the reset's error names the peer")
				require.Equal(t, want, oe.Addr.String())
			} else {
				// Windows under Wine reports the reset as the end of the
				// stream.
				require.ErrorIs(t, r3.Err, io.EOF)
			}
		})
	}
}

// TestPollReadKeepsItsFuture: while a PollRead or PollWrite is in flight,
// Read and Write hand out futures of their own and leave the stream's
// spare, which the PollRead or PollWrite is polling, alone; once none is,
// they reuse the spare again.
func TestPollReadKeepsItsFuture(t *testing.T) {
	var s conn
	spareR, spareW := s.Read(nil), s.Write(nil)
	spareR.f.done, spareW.f.done = true, true
	s.pollingRead, s.pollingWrite = true, true
	r, w := s.Read(make([]byte, 1)), s.Write(make([]byte, 1))
	require.NotSame(t, spareR, r, "a Read during a PollRead took its future")
	require.NotSame(t, spareW, w, "a Write during a PollWrite took its future")
	require.Same(t, spareR, s.read)
	require.Same(t, spareW, s.write)
	s.pollingRead, s.pollingWrite = false, false
	require.Same(t, spareR, s.Read(nil), "the finished spare is reused")
	require.Same(t, spareW, s.Write(nil), "the finished spare is reused")
}
