package blitz_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// await runs f on the runtime from the test goroutine.
func await[T any](t testing.TB, rt *blitz.Runtime, f future.Future[T]) T {
	t.Helper()
	v, err := blitz.BlockOn(testCtx(t), rt.Handle(), f)
	require.NoError(t, err)
	return v
}

// ok unwraps a Result, failing the test on its error.
func ok[T any](t testing.TB, r future.Result[T]) T {
	t.Helper()
	require.NoError(t, r.Err)
	return r.Value
}

// TestTCPEchoServer serves echo over the runtime to plain net clients: the
// accept loop and the handlers are tasks, the clients goroutines.
func TestTCPEchoServer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		server := blitz.SpawnOn(rt.Handle(), future.Future[int](&acceptLoop{l: l}))

		clients, rounds := 8, 200
		if testing.Short() {
			rounds = 50
		}
		runEchoClients(t, l.AddrPort().String(), clients, rounds)
		require.NoError(t, l.Close())
		n, err := server.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, clients, n)
	})
}

// runEchoClients runs clients echoClients at once against addr and
// requires that each succeeds.
func runEchoClients(t *testing.T, addr string, clients, rounds int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- echoClient(addr, c, rounds)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// echoClient makes rounds round trips of distinct messages.
func echoClient(addr string, id, rounds int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 64)
	for i := range rounds {
		msg := fmt.Appendf(nil, "client %d round %d", id, i)
		if _, err := c.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, buf[:len(msg)]); err != nil {
			return err
		}
		if !bytes.Equal(buf[:len(msg)], msg) {
			return fmt.Errorf("echo %q, want %q", buf[:len(msg)], msg)
		}
	}
	return nil
}

// A net listener as the peer: dial, write, read, end of stream.
func TestTCPDialReadWriteEOF(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 5)
			_, _ = io.ReadFull(c, buf)
			_, _ = c.Write(append([]byte("re: "), buf...))
			c.Close()
		}()
		s := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), ln.Addr().String(), time.Second))))
		defer s.Close()
		assert.Equal(t, ln.Addr().String(), s.RemoteAddr().String())
		require.NoError(t, s.SetNoDelay(true))
		w := s.WriteAll([]byte("hello"))
		assert.Equal(t, 5, ok(t, await(t, rt, future.Future[future.Result[int]](w))))
		var got []byte
		buf := make([]byte, 3)
		for {
			rd := s.Read(buf)
			r := await(t, rt, future.Future[future.Result[int]](rd))
			if r.Err == io.EOF {
				break
			}
			require.NoError(t, r.Err)
			got = append(got, buf[:r.Value]...)
		}
		assert.Equal(t, "re: hello", string(got))
	})
}

func TestTCPConnRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		r := await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), addr, time.Second)))
		require.Error(t, r.Err)
		assert.ErrorIs(t, r.Err, backend.ErrConnRefused)
		var oe *net.OpError
		assert.ErrorAs(t, r.Err, &oe)
		if goruntime.GOOS != "windows" {
			assert.ErrorIs(t, r.Err, syscall.ECONNREFUSED)
		}
	})
}

// tcpPair returns a runtime stream and the net.Conn at its other end.
func tcpPair(t *testing.T, rt *blitz.Runtime) (*blitz.TCPStream, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	s := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), ln.Addr().String(), time.Second))))
	peer := <-accepted
	require.NotNil(t, peer)
	t.Cleanup(func() { peer.Close(); s.Close() })
	return s, peer
}

func TestTCPReadTimeout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		s.SetReadTimeout(20 * time.Millisecond)
		buf := make([]byte, 8)
		start := time.Now()
		rd := s.Read(buf)
		r := await(t, rt, future.Future[future.Result[int]](rd))
		require.Error(t, r.Err)
		assert.GreaterOrEqual(t, time.Since(start), 15*time.Millisecond)
		assert.ErrorIs(t, r.Err, os.ErrDeadlineExceeded)
		assert.ErrorIs(t, r.Err, blitz.ErrTimeout)
		var ne net.Error
		require.ErrorAs(t, r.Err, &ne)
		assert.True(t, ne.Timeout())
		// The stream still works afterwards.
		s.SetReadTimeout(0)
		_, err := peer.Write([]byte("late"))
		require.NoError(t, err)
		rd2 := s.Read(buf)
		assert.Equal(t, "late", string(buf[:ok(t, await(t, rt, future.Future[future.Result[int]](rd2)))]))
	})
}

// readLoop reads until n bytes arrived, each read bounded by a Timeout of
// d that cancels it: data a cancelled read received must reach a later
// read.
type readLoop struct {
	s     *blitz.TCPStream
	buf   []byte
	want  int
	got   []byte
	d     time.Duration
	tf    future.Future[future.Result[future.Result[int]]]
	rd    *blitz.ReadFuture
	cuts  int
	state int
}

func (l *readLoop) Poll(cx *future.Context) ([]byte, bool) {
	for len(l.got) < l.want {
		if l.state == 0 {
			l.rd = l.s.Read(l.buf)
			l.tf = blitz.Timeout(l.d, future.Future[future.Result[int]](l.rd))
			l.state = 1
		}
		r, ok := l.tf.Poll(cx)
		if !ok {
			return nil, false
		}
		l.state = 0
		if errors.Is(r.Err, blitz.ErrTimeout) {
			l.cuts++
			continue
		}
		if r.Err != nil || r.Value.Err != nil {
			return l.got, true
		}
		l.got = append(l.got, l.buf[:r.Value.Value]...)
	}
	return l.got, true
}

// TestTCPCancelledReadLosesNothing sends a stream in small pieces at
// irregular times while the reader keeps cancelling its reads with short
// timeouts: every byte arrives, in order.
func TestTCPCancelledReadLosesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		total := 4000
		if testing.Short() {
			total = 800
		}
		want := make([]byte, total)
		for i := range want {
			want[i] = byte(i*7 + i/256)
		}
		go func() {
			for i := 0; i < total; i += 40 {
				_, _ = peer.Write(want[i:min(i+40, total)])
				time.Sleep(time.Duration(i%3) * 300 * time.Microsecond)
			}
		}()
		l := &readLoop{s: s, buf: make([]byte, 16), want: total, d: 200 * time.Microsecond}
		got := await(t, rt, future.Future[[]byte](l))
		require.Equal(t, want, got)
		t.Logf("%d reads cut by their timeout", l.cuts)
	})
}

func TestTCPCloseWhileReading(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, _ := tcpPair(t, rt)
		buf := make([]byte, 8)
		rd := s.Read(buf)
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](rd))
		time.Sleep(10 * time.Millisecond)
		require.NoError(t, s.Close())
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.ErrorIs(t, r.Err, net.ErrClosed)
		assert.ErrorIs(t, r.Err, blitz.ErrClosed)
		// Everything after Close fails the same way.
		rd2 := s.Read(buf)
		assert.ErrorIs(t, await(t, rt, future.Future[future.Result[int]](rd2)).Err, net.ErrClosed)
		assert.ErrorIs(t, s.SetNoDelay(true), net.ErrClosed)
		assert.ErrorIs(t, s.Close(), net.ErrClosed)
	})
}

// Two reads at once on one stream: the second is refused with ErrBusy.
func TestTCPConcurrentReadsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		buf1, buf2 := make([]byte, 8), make([]byte, 8)
		rd1 := s.Read(buf1)
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](rd1))
		time.Sleep(10 * time.Millisecond)
		rd2 := s.Read(buf2)
		assert.ErrorIs(t, await(t, rt, future.Future[future.Result[int]](rd2)).Err, blitz.ErrBusy)
		_, _ = peer.Write([]byte("x"))
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, 1, ok(t, r))
	})
}

func TestTCPSplitHalves(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		rh, wh := s.Split()
		buf := make([]byte, 4)
		rd := rh.Read(buf)
		reader := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](rd))
		wr := wh.WriteAll([]byte("ping"))
		writer := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](wr))
		got := make([]byte, 4)
		_, err := io.ReadFull(peer, got)
		require.NoError(t, err)
		assert.Equal(t, "ping", string(got))
		_, err = peer.Write([]byte("pong"))
		require.NoError(t, err)
		r, err := reader.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, "pong", string(buf[:ok(t, r)]))
		_, err = writer.Wait(testCtx(t))
		require.NoError(t, err)
		// Closing the write half shuts down sending: the peer reads EOF;
		// the read half still works until it is closed too.
		require.NoError(t, wh.Close())
		_, err = peer.Read(got)
		assert.Equal(t, io.EOF, err)
		_, _ = peer.Write([]byte("more"))
		rd2 := rh.Read(buf)
		assert.Equal(t, "more", string(buf[:ok(t, await(t, rt, future.Future[future.Result[int]](rd2)))]))
		require.NoError(t, rh.Close())
		assert.ErrorIs(t, rh.Close(), net.ErrClosed)
	})
}

// The peer resets the connection: the read reports it (errors.Is
// ErrConnReset), a later write fails, nothing hangs.
func TestTCPPeerReset(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		buf := make([]byte, 8)
		rd := s.Read(buf)
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](rd))
		time.Sleep(10 * time.Millisecond)
		require.NoError(t, peer.(*net.TCPConn).SetLinger(0))
		require.NoError(t, peer.Close())
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		if r.Err != io.EOF || goruntime.GOOS != "windows" { // Wine reports EOF
			assert.ErrorIs(t, r.Err, backend.ErrConnReset)
		}
		var werr error
		for range 10 {
			w := s.WriteAll(make([]byte, 1024))
			if werr = await(t, rt, future.Future[future.Result[int]](w)).Err; werr != nil {
				break
			}
		}
		require.Error(t, werr)
		assert.True(t, errors.Is(werr, backend.ErrConnReset) || errors.Is(werr, backend.ErrBrokenPipe), "%v", werr)
	})
}

// A peer that stops reading: WriteAll of more than the socket buffers
// waits (it does not spin or fail), and completes once the peer reads.
func TestTCPPeerStopsReading(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		// More than loopback's autotuned buffers hold (4 MiB to send and 6
		// MiB to receive at most on Linux).
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<21) // 32 MiB
		w := s.WriteAll(big)
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](w))
		time.Sleep(50 * time.Millisecond)
		select {
		case <-doneChan(h):
			t.Fatal("WriteAll of 32 MiB finished while the peer read nothing")
		default:
		}
		got, err := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		require.NoError(t, err)
		assert.Equal(t, big, got)
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, len(big), ok(t, r))
	})
}

// doneChan closes when h's task finished.
func doneChan[T any](h blitz.JoinHandle[T]) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		_, _ = h.Wait(context.Background())
		close(ch)
	}()
	return ch
}

func TestTCPOptions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, _ := tcpPair(t, rt)
		assert.NoError(t, s.SetNoDelay(false))
		assert.NoError(t, s.SetKeepAlive(30*time.Second))
		assert.NoError(t, s.SetKeepAlive(0))
		assert.NoError(t, s.SetLinger(time.Second))
		assert.NoError(t, s.SetLinger(-1))
		assert.NoError(t, s.CloseWrite())
	})
}

func TestListenErrors(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	_, err := blitz.ListenTCP(rt.Handle(), "not an address")
	assert.Error(t, err)
	_, err = blitz.ListenTCP(rt.Handle(), "example.com:80")
	assert.Error(t, err, "names are refused for a bind")
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = blitz.ListenTCP(rt.Handle(), l.Addr().String())
	assert.ErrorIs(t, err, backend.ErrAddrInUse)
	none := newRuntime(t, blitz.Config{Workers: 1, Backend: blitz.BackendNone})
	_, err = blitz.ListenTCP(none.Handle(), "127.0.0.1:0")
	assert.ErrorIs(t, err, blitz.ErrNoIO)
}

func TestUDP(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		a, err := blitz.BindUDP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer a.Close()
		b, err := blitz.BindUDP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer b.Close()
		buf := make([]byte, 64)
		rf := b.RecvFrom(buf)
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[blitz.Datagram]](rf))
		st := a.SendTo([]byte("datagram"), b.LocalAddrPort())
		assert.Equal(t, 8, ok(t, await(t, rt, future.Future[future.Result[int]](st))))
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		d := ok(t, r)
		assert.Equal(t, "datagram", string(buf[:d.N]))
		assert.Equal(t, a.LocalAddrPort(), d.From)

		require.NoError(t, b.Connect(a.LocalAddrPort()))
		sd := b.Send([]byte("reply"))
		assert.Equal(t, 5, ok(t, await(t, rt, future.Future[future.Result[int]](sd))))
		rf2 := a.RecvFrom(buf)
		d2 := ok(t, await(t, rt, future.Future[future.Result[blitz.Datagram]](rf2)))
		assert.Equal(t, "reply", string(buf[:d2.N]))
		assert.Equal(t, b.LocalAddrPort(), d2.From)
	})
}

func TestUnixSockets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		dir, err := os.MkdirTemp("", "blitz-unix")
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "s")
		l, err := blitz.ListenUnix(rt.Handle(), path)
		if errors.Is(err, backend.ErrUnsupported) {
			t.Skip("no Unix sockets here:", err)
		}
		require.NoError(t, err)
		defer l.Close()
		acc := l.Accept()
		ah := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[*blitz.UnixStream]](acc))
		c := ok(t, await(t, rt, future.Future[future.Result[*blitz.UnixStream]](blitz.DialUnix(rt.Handle(), path))))
		defer c.Close()
		r, err := ah.Wait(testCtx(t))
		require.NoError(t, err)
		srv := ok(t, r)
		defer srv.Close()
		w := c.WriteAll([]byte("over unix"))
		ok(t, await(t, rt, future.Future[future.Result[int]](w)))
		buf := make([]byte, 32)
		rd := srv.Read(buf)
		assert.Equal(t, "over unix", string(buf[:ok(t, await(t, rt, future.Future[future.Result[int]](rd)))]))

		dg, err := blitz.BindUnixDatagram(rt.Handle(), filepath.Join(dir, "d"))
		if errors.Is(err, backend.ErrUnsupported) {
			return // Windows has Unix stream sockets only
		}
		require.NoError(t, err)
		defer dg.Close()
		sender, err := blitz.BindUnixDatagram(rt.Handle(), filepath.Join(dir, "e"))
		require.NoError(t, err)
		defer sender.Close()
		st := sender.SendTo([]byte("dgram"), filepath.Join(dir, "d"))
		ok(t, await(t, rt, future.Future[future.Result[int]](st)))
		rf := dg.RecvFrom(buf)
		d := ok(t, await(t, rt, future.Future[future.Result[blitz.Datagram]](rf)))
		assert.Equal(t, "dgram", string(buf[:d.N]))
		assert.Equal(t, filepath.Join(dir, "e"), d.FromPath)
	})
}

func TestResolveAndDialByName(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	addrs := ok(t, await(t, rt, future.Future[future.Result[[]netip.Addr]](blitz.Resolve("localhost"))))
	require.NotEmpty(t, addrs)
	for _, a := range addrs {
		assert.True(t, a.IsLoopback(), a)
	}
	lit := ok(t, await(t, rt, future.Future[future.Result[[]netip.Addr]](blitz.Resolve("192.0.2.1"))))
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("192.0.2.1")}, lit)

	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	acc := l.Accept()
	ah := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](acc))
	port := l.AddrPort().Port()
	// localhost may resolve to ::1 first, where nobody listens: the dial
	// goes on to 127.0.0.1.
	s := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), fmt.Sprintf("localhost:%d", port), time.Second))))
	defer s.Close()
	r, err := ah.Wait(testCtx(t))
	require.NoError(t, err)
	ok(t, r).Close()

	bad := await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), "no-such-host.invalid:80", time.Second)))
	assert.Error(t, bad.Err)
}
