package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catch runs fn and turns a panic into an error, so that a test of a
// misuse reports the panic of the unfixed code instead of dying of it.
func catch(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	return fn()
}

// requireNilFuture checks that err is the nil-future misuse, as every
// package names it.
func requireNilFuture(t *testing.T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, blitz.ErrNilFuture, what)
	require.ErrorIs(t, err, future.ErrNilFuture, what)
	require.ErrorIs(t, err, scheduler.ErrNilFuture, what)
}

// TestNilFutureRefusedAtTheCall: BlockOn, Spawn, SpawnOn, TrySpawnOn,
// SpawnBlocking and Blocking given a nil future (or function) answer with
// ErrNilFuture where they are called, never with a nil dereference later.
func TestNilFutureRefusedAtTheCall(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := rt.Handle()
	requireNilFuture(t, catch(func() error {
		_, err := blitz.BlockOn[int](testCtx(t), h, nil)
		return err
	}), "BlockOn")
	requireNilFuture(t, catch(func() error {
		_, err := blitz.SpawnOn[int](h, nil).Wait(testCtx(t))
		return err
	}), "SpawnOn")
	requireNilFuture(t, catch(func() error {
		_, err := blitz.TrySpawnOn[int](h, nil)
		return err
	}), "TrySpawnOn")
	requireNilFuture(t, catch(func() error {
		_, err := blitz.SpawnBlocking[int](h, nil).Wait(testCtx(t))
		return err
	}), "SpawnBlocking")
	requireNilFuture(t, catch(func() error {
		r, err := blitz.BlockOn(testCtx(t), h, future.Future[future.Result[int]](blitz.Blocking[int](nil)))
		if err != nil {
			return err
		}
		return r.Err
	}), "Blocking")
	requireNilFuture(t, catch(func() error {
		r, err := blitz.BlockOn(testCtx(t), h, future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
			return blitz.Spawn[int](cx, nil).Poll(cx)
		}))
		if err != nil {
			return err
		}
		return r.Err
	}), "Spawn from a task")
	// A nil child given to a combinator inside a task panics at that call
	// with the same sentinel, and the task's handle matches it.
	_, err := blitz.SpawnOn(h, future.PollFn(func(*future.Context) (int, bool) {
		future.JoinAll(future.Ready(1), nil)
		return 0, true
	})).Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrPanicked)
	requireNilFuture(t, err, "JoinAll with a nil child, in a task")
	// The runtime is unharmed.
	v, err := blitz.SpawnOn(h, future.Ready(4)).Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 4, v)
}

// requireShutdownErr checks the error of a call on a runtime that was shut
// down.
func requireShutdownErr(t *testing.T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, blitz.ErrShutdown, what)
}

// TestShutDownRuntimeRefusesNewSockets: after Shutdown, making a socket or
// starting a process fails with ErrShutdown rather than making an object
// whose operations cannot run.
func TestShutDownRuntimeRefusesNewSockets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 1
		rt := newRuntime(t, cfg)
		require.NoError(t, rt.Shutdown(testCtx(t)))
		h := rt.Handle()
		// Not t.TempDir: under Wine its removal fails ("Invalid function").
		dir, err := os.MkdirTemp("", "blitz-misuse")
		require.NoError(t, err)
		defer os.RemoveAll(dir)

		if ln, err := blitz.ListenTCP(h, "127.0.0.1:0"); err == nil {
			ln.Close()
			t.Error("ListenTCP on a shut-down runtime succeeded")
		} else {
			requireShutdownErr(t, err, "ListenTCP")
		}
		if u, err := blitz.BindUDP(h, "127.0.0.1:0"); err == nil {
			u.Close()
			t.Error("BindUDP on a shut-down runtime succeeded")
		} else {
			requireShutdownErr(t, err, "BindUDP")
		}
		if l, err := blitz.ListenUnix(h, filepath.Join(dir, "l")); err == nil {
			l.Close()
			t.Error("ListenUnix on a shut-down runtime succeeded")
		} else if !errors.Is(err, backend.ErrUnsupported) {
			requireShutdownErr(t, err, "ListenUnix")
		}
		if u, err := blitz.BindUnixDatagram(h, filepath.Join(dir, "d")); err == nil {
			u.Close()
			t.Error("BindUnixDatagram on a shut-down runtime succeeded")
		} else if !errors.Is(err, backend.ErrUnsupported) {
			requireShutdownErr(t, err, "BindUnixDatagram")
		}

		ctx := testCtx(t)
		r, err := future.Block(ctx, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(h, "127.0.0.1:9", time.Second)))
		require.NoError(t, err)
		if r.Err == nil {
			r.Value.Close()
		}
		requireShutdownErr(t, r.Err, "DialTCP")
		ru, err := future.Block(ctx, future.Future[future.Result[*blitz.UnixStream]](blitz.DialUnix(h, filepath.Join(dir, "none"))))
		require.NoError(t, err)
		if ru.Err == nil {
			ru.Value.Close()
		}
		if !errors.Is(ru.Err, backend.ErrUnsupported) {
			requireShutdownErr(t, ru.Err, "DialUnix")
		}
		rc, err := future.Block(ctx, future.Future[future.Result[*blitz.Child]](childCmd("exit", "0").Spawn(h)))
		require.NoError(t, err)
		if rc.Err == nil {
			_, _ = future.Block(ctx, future.Future[future.Result[blitz.ExitStatus]](rc.Value.Wait()))
		}
		requireShutdownErr(t, rc.Err, "Command.Spawn polled by a goroutine")
		rc, err = blitz.BlockOn(ctx, h, future.Future[future.Result[*blitz.Child]](childCmd("exit", "0").Spawn(h)))
		if err == nil {
			err = rc.Err
		}
		requireShutdownErr(t, err, "Command.Spawn through BlockOn")
	})
}

// requireClosedByShutdown checks the error of an operation on a socket whose
// runtime shut down: it matches net.ErrClosed, as Go's own sockets' errors
// do after a close, and the runtime's ErrClosed and ErrShutdown.
func requireClosedByShutdown(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	assert.ErrorIs(t, err, net.ErrClosed, what)
	assert.ErrorIs(t, err, blitz.ErrClosed, what)
	assert.ErrorIs(t, err, blitz.ErrShutdown, what)
}

// TestSocketsOfShutDownRuntimeFailClosed: sockets made before Shutdown fail
// every operation afterwards with an error matching net.ErrClosed, and
// Close still releases them.
func TestSocketsOfShutDownRuntimeFailClosed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		h := rt.Handle()
		ln, err := blitz.ListenTCP(h, "127.0.0.1:0")
		require.NoError(t, err)
		s, peer := tcpPair(t, rt)
		udp, err := blitz.BindUDP(h, "127.0.0.1:0")
		require.NoError(t, err)
		// A hot stream reads with a direct system call: make it hot.
		_, err = peer.Write(make([]byte, 8192))
		require.NoError(t, err)
		buf := make([]byte, 8192)
		got := 0
		for got < 8192 {
			rd := s.Read(buf)
			got += ok(t, await(t, rt, future.Future[future.Result[int]](rd)))
		}
		_, err = peer.Write([]byte("pending data"))
		require.NoError(t, err)

		require.NoError(t, rt.Shutdown(testCtx(t)))
		ctx := testCtx(t)
		acc := ln.Accept()
		ra, err := future.Block(ctx, future.Future[future.Result[*blitz.TCPStream]](acc))
		require.NoError(t, err)
		requireClosedByShutdown(t, ra.Err, "Accept")
		rd := s.Read(buf)
		rr, err := future.Block(ctx, future.Future[future.Result[int]](rd))
		require.NoError(t, err)
		requireClosedByShutdown(t, rr.Err, "Read")
		wr := s.Write([]byte("x"))
		rw, err := future.Block(ctx, future.Future[future.Result[int]](wr))
		require.NoError(t, err)
		requireClosedByShutdown(t, rw.Err, "Write")
		wa := s.WriteAll([]byte("xyz"))
		rw, err = future.Block(ctx, future.Future[future.Result[int]](wa))
		require.NoError(t, err)
		requireClosedByShutdown(t, rw.Err, "WriteAll")
		requireClosedByShutdown(t, s.SetNoDelay(true), "SetNoDelay")
		requireClosedByShutdown(t, s.CloseWrite(), "CloseWrite")
		st := udp.SendTo([]byte("d"), udp.LocalAddrPort())
		rs, err := future.Block(ctx, future.Future[future.Result[int]](st))
		require.NoError(t, err)
		requireClosedByShutdown(t, rs.Err, "SendTo")
		rf := udp.RecvFrom(buf)
		rd2, err := future.Block(ctx, future.Future[future.Result[blitz.Datagram]](rf))
		require.NoError(t, err)
		requireClosedByShutdown(t, rd2.Err, "RecvFrom")
		requireClosedByShutdown(t, udp.Connect(udp.LocalAddrPort()), "UDP Connect")

		assert.NoError(t, s.Close(), "Close after the shutdown releases the socket")
		assert.NoError(t, ln.Close())
		assert.NoError(t, udp.Close())
		assert.ErrorIs(t, s.Close(), net.ErrClosed, "a second Close")
		// The peer sees the connection end.
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(10*time.Second)))
		for {
			if _, err := peer.Read(buf); err != nil {
				assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the peer saw no close")
				break
			}
		}
	})
}

// TestDialAndTimeoutsWithHugeDuration: a connect or socket timeout near
// math.MaxInt64 means no timeout, not one that has already passed.
func TestDialAndTimeoutsWithHugeDuration(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
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
		r := await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), ln.Addr().String(), math.MaxInt64)))
		require.NoError(t, r.Err, "DialTCP with a timeout of MaxInt64")
		s := r.Value
		defer s.Close()
		peer := <-accepted
		require.NotNil(t, peer)
		defer peer.Close()

		s.SetReadTimeout(math.MaxInt64)
		s.SetWriteTimeout(math.MaxInt64)
		go func() {
			time.Sleep(20 * time.Millisecond)
			_, _ = peer.Write([]byte("late"))
		}()
		buf := make([]byte, 8)
		rd := s.Read(buf)
		assert.Equal(t, "late", string(buf[:ok(t, await(t, rt, future.Future[future.Result[int]](rd)))]), "a read with a MaxInt64 timeout")
		wr := s.Write([]byte("ok"))
		assert.Equal(t, 2, ok(t, await(t, rt, future.Future[future.Result[int]](wr))), "a write with a MaxInt64 timeout")

		udp, err := blitz.BindUDP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer udp.Close()
		udp.SetReadTimeout(math.MaxInt64)
		sender, err := blitz.BindUDP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer sender.Close()
		sent := make(chan error, 1)
		go func() {
			time.Sleep(20 * time.Millisecond)
			st := sender.SendTo([]byte("dgram"), udp.LocalAddrPort())
			r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[int]](st))
			if err == nil {
				err = r.Err
			}
			sent <- err
		}()
		rf := udp.RecvFrom(buf)
		d := ok(t, await(t, rt, future.Future[future.Result[blitz.Datagram]](rf)))
		assert.Equal(t, "dgram", string(buf[:d.N]), "a receive with a MaxInt64 timeout")
		require.NoError(t, <-sent)
	})
}

// TestBlockingInTaskRefused calls BlockOn and JoinHandle.Wait from inside a
// task, on a one-worker runtime (where blocking the worker would hang
// forever: the awaited work can never run) and on a four-worker one: both
// refuse at once with ErrBlockingInTask.
func TestBlockingInTaskRefused(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			rt := newRuntime(t, blitz.Config{Workers: workers})
			h := rt.Handle()
			gate := make(chan struct{})
			defer func() {
				select {
				case <-gate:
				default:
					close(gate)
				}
			}()
			inner := blitz.SpawnOn(h, future.Future[future.Result[int]](blitz.Blocking(func() (int, error) { <-gate; return 1, nil })))
			type out struct {
				blockOn, wait error
				elapsed       time.Duration
			}
			outer := blitz.SpawnOn(h, future.PollFn(func(*future.Context) (out, bool) {
				// The timeouts bound the calls on the unfixed code, so that
				// the test reports instead of hanging.
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				start := time.Now()
				_, errB := blitz.BlockOn(ctx, h, blitz.Sleep(time.Hour))
				_, errW := inner.Wait(ctx)
				return out{errB, errW, time.Since(start)}, true
			}))
			o, err := outer.Wait(testCtx(t))
			require.NoError(t, err)
			require.ErrorIs(t, o.blockOn, blitz.ErrBlockingInTask, "BlockOn")
			require.ErrorIs(t, o.wait, blitz.ErrBlockingInTask, "JoinHandle.Wait")
			require.ErrorIs(t, o.wait, scheduler.ErrBlockingInTask)
			require.Less(t, o.elapsed, time.Second, "refused at once")
			close(gate)
			r, err := inner.Wait(testCtx(t))
			require.NoError(t, err)
			require.Equal(t, future.Ok(1), r)
		})
	}
}

// TestBlockOnFromBlockingPool: a blocking-pool thread is no worker, so it
// may BlockOn the runtime (as the pool exists for such code).
func TestBlockOnFromBlockingPool(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := rt.Handle()
	r, err := blitz.SpawnOn(h, future.Future[future.Result[int]](blitz.Blocking(func() (int, error) {
		return blitz.BlockOn(context.Background(), h, future.Then(blitz.Sleep(time.Millisecond), func(struct{}) future.Future[int] {
			return future.Ready(9)
		}))
	}))).Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, future.Ok(9), r)
}

// TestCoordinatorWaitAndShutdownInTaskRefused: Coordinator.Wait before the
// drain and Runtime.Shutdown, called from a task of a one-worker runtime,
// would block the worker that has to run what they wait for. Both return
// ErrBlockingInTask at once; the task's Shutdown has started the shutdown,
// which a goroutine's Shutdown then waits for.
func TestCoordinatorWaitAndShutdownInTaskRefused(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	c := blitz.NewCoordinator()
	g := mustGuard(t, c, "held")
	defer g.Release()
	type out struct {
		wait, shutdown error
		held           []string
		elapsed        time.Duration
	}
	h := blitz.SpawnOn(rt.Handle(), future.PollFn(func(*future.Context) (out, bool) {
		// The timeout bounds the calls on the unfixed code.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		rep, errW := c.Wait(ctx)
		errS := rt.Shutdown(ctx)
		return out{errW, errS, rep.Held, time.Since(start)}, true
	}))
	o, err := h.Wait(testCtx(t))
	require.NoError(t, err)
	require.ErrorIs(t, o.wait, blitz.ErrBlockingInTask, "Coordinator.Wait")
	require.Equal(t, []string{"held"}, o.held)
	require.ErrorIs(t, o.shutdown, blitz.ErrBlockingInTask, "Shutdown")
	require.Less(t, o.elapsed, time.Second, "refused at once")
	require.NoError(t, rt.Shutdown(testCtx(t)), "a goroutine waits for the shutdown the task started")
	_, err = blitz.SpawnOn(rt.Handle(), future.Ready(1)).Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrShutdown)
}

// TestBadAddressErrorsAsNet: an address that does not parse fails DialTCP
// and ListenTCP with the error Go's net.Dial and net.Listen give for it,
// word for word: a *net.OpError naming no address, wrapping the parse (or
// port lookup) error.
func TestBadAddressErrorsAsNet(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := rt.Handle()
	for _, addr := range []string{"nonsense", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:-1", "[::1", "a:b:c", "127.0.0.1:http-nope", ":65536"} {
		_, want := net.Dial("tcp", addr)
		require.Error(t, want, addr)
		r, err := blitz.BlockOn(testCtx(t), h, blitz.DialTCP(h, addr, time.Second))
		require.NoError(t, err, addr)
		requireSameAddressError(t, "dial", addr, want, r.Err)

		_, want = net.Listen("tcp", addr)
		require.Error(t, want, addr)
		l, err := blitz.ListenTCP(h, addr)
		if err == nil {
			l.Close()
		}
		requireSameAddressError(t, "listen", addr, want, err)
	}
}

// requireSameAddressError checks that got is the *net.OpError of op with
// no address and the text of want, Go's own error for the same address.
func requireSameAddressError(t *testing.T, op, addr string, want, got error) {
	t.Helper()
	var oe *net.OpError
	require.ErrorAs(t, got, &oe, "%s %q", op, addr)
	assert.Equal(t, op, oe.Op, addr)
	assert.Nil(t, oe.Addr, "%s %q: an address that did not parse is not named", op, addr)
	assert.Equal(t, want.Error(), got.Error(), "%s %q", op, addr)
}

// TestListenAddressesAsNet: ListenTCP and BindUDP read the addresses
// Go's net.Listen and net.ListenPacket read, and bind where they bind:
// "localhost" is the IPv4 loopback, "" and ":0" every interface, an empty
// port one the system picks. A name that needs a lookup is refused, with
// an error that says what to do.
func TestListenAddressesAsNet(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := rt.Handle()
	for _, addr := range []string{"localhost:0", "LocalHost:0", "localhost:", "", ":0", ":", "127.0.0.1:0"} {
		nl, err := net.Listen("tcp", addr)
		require.NoError(t, err, addr)
		want := nl.Addr().(*net.TCPAddr).AddrPort().Addr()
		nl.Close()
		l, err := blitz.ListenTCP(h, addr)
		require.NoError(t, err, "ListenTCP(%q)", addr)
		assert.Equal(t, want, l.AddrPort().Addr(), "ListenTCP(%q)", addr)
		assert.NotZero(t, l.AddrPort().Port(), "ListenTCP(%q)", addr)
		require.NoError(t, l.Close())

		// Go's UDP socket needs an ioctl Wine lacks (SIO_UDP_CONNRESET);
		// there the TCP listener's address stands for it.
		if np, err := net.ListenPacket("udp", addr); err == nil {
			want = np.LocalAddr().(*net.UDPAddr).AddrPort().Addr()
			np.Close()
		}
		u, err := blitz.BindUDP(h, addr)
		require.NoError(t, err, "BindUDP(%q)", addr)
		assert.Equal(t, want, u.LocalAddrPort().Addr(), "BindUDP(%q)", addr)
		assert.NotZero(t, u.LocalAddrPort().Port(), "BindUDP(%q)", addr)
		require.NoError(t, u.Close())
	}

	_, err := blitz.ListenTCP(h, "name.invalid:0")
	require.ErrorContains(t, err, `bind to "name.invalid": an IP address or localhost is needed`)
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "listen", op.Op)
}
