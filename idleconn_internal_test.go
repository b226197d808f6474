package blitz

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

// idleBackends are the backends of this platform that start here.
func idleBackends(t *testing.T) []string {
	var names []string
	for _, n := range []string{BackendURing, BackendEpoll, BackendKqueue, BackendPoll, BackendIOCP} {
		if rt, err := New(Config{Workers: 1, Backend: n}); err == nil {
			_ = rt.Shutdown(context.Background())
			names = append(names, n)
		}
	}
	return names
}

// idlePair starts a runtime on backend bk and returns a connection of it
// accepted from a net.Conn client; both are closed and the runtime shut
// down when the test ends.
func idlePair(t *testing.T, bk string) (*Runtime, *TCPStream, net.Conn) {
	t.Helper()
	rt, err := New(Config{Workers: 2, Backend: bk})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := net.Dial("tcp", l.AddrPort().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	r, err := BlockOn(ctx, rt.Handle(), l.Accept())
	require.NoError(t, err)
	require.NoError(t, r.Err)
	t.Cleanup(func() { _ = r.Value.Close() })
	return rt, r.Value, c
}

// TestIdleConnHoldsNoWriteSlot: once its write ended, a connection holds
// no write slot (an idle connection would otherwise keep one, op record
// and all, for nothing), and the next write takes one again.
func TestIdleConnHoldsNoWriteSlot(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, c := idlePair(t, bk)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range 3 {
				msg := []byte(fmt.Sprintf("round %d", i))
				r, err := BlockOn(ctx, rt.Handle(), s.WriteAll(msg))
				require.NoError(t, err)
				require.NoError(t, r.Err)
				require.True(t, s.n.wr.idle(), "the write slot's op record is given up when the write ended")
				got := make([]byte, len(msg))
				require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
				_, err = io.ReadFull(c, got)
				require.NoError(t, err)
				require.Equal(t, msg, got)
			}
		})
	}
}

// TestWriteSlotsReusedAcrossSockets writes from many tasks on many
// sockets at once, so that write slots retire and are taken by other
// sockets while claimers race them: every socket's peer must receive
// exactly its own bytes, in order.
func TestWriteSlotsReusedAcrossSockets(t *testing.T) {
	socks, rounds := 16, 200
	if testing.Short() {
		socks, rounds = 8, 50
	}
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, err := New(Config{Workers: 2, Backend: bk})
			require.NoError(t, err)
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				require.NoError(t, rt.Shutdown(ctx))
			}()
			l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
			require.NoError(t, err)
			defer l.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 2*socks)
			for i := range socks {
				c, err := net.Dial("tcp", l.AddrPort().String())
				require.NoError(t, err)
				defer c.Close()
				r, err := BlockOn(ctx, rt.Handle(), l.Accept())
				require.NoError(t, err)
				require.NoError(t, r.Err)
				s := r.Value
				defer s.Close()
				want := make([]byte, 0, rounds*8)
				for k := range rounds {
					want = append(want, fmt.Sprintf("%02d:%04d;", i, k)...)
				}
				wg.Add(2)
				go func() { // the writer: one write a round, each from a task of its own
					defer wg.Done()
					for k := range rounds {
						r, err := BlockOn(ctx, rt.Handle(), s.WriteAll(want[k*8:(k+1)*8]))
						if err == nil {
							err = r.Err
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}()
				go func() { // the peer
					defer wg.Done()
					got := make([]byte, len(want))
					_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
					if _, err := io.ReadFull(c, got); err != nil {
						errs <- err
						return
					}
					if string(got) != string(want) {
						errs <- fmt.Errorf("socket %d received %q, want %q", i, got, want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// waitFor polls cond every millisecond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// armState reads n's armed receive's state.
func (n *netFD) armStateNow() armState {
	n.arm.mu.Lock()
	defer n.arm.mu.Unlock()
	return n.arm.state
}

// TestPooledReadWaitsWithoutOpRecord: a pooled read waiting for data on a
// backend that arms receives holds no op record in the socket (its read
// slot is idle): the receive is armed in the backend. With arming off (the
// fallback, forced), it waits through the slot, and reads the same data.
func TestPooledReadWaitsWithoutOpRecord(t *testing.T) {
	for _, bk := range idleBackends(t) {
		for _, fallback := range []bool{false, true} {
			name := bk
			if fallback {
				name += "/fallback"
			}
			t.Run(name, func(t *testing.T) {
				armDisabled.Store(fallback)
				defer armDisabled.Store(false)
				rt, s, c := idlePair(t, bk)
				canArm := !fallback && s.n.ring.armer() != nil
				if !fallback && !canArm && bk != BackendIOCP {
					t.Fatalf("backend %s does not arm receives", bk)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				for i := range 3 {
					h := SpawnOn(rt.Handle(), future.Future[future.Result[PooledBuf]](s.ReadPooled()))
					if canArm {
						waitFor(t, "the receive is armed", func() bool { return s.n.armStateNow() == armArmed })
						require.True(t, s.n.rd.idle(), "an armed pooled read holds no op record")
					} else {
						waitFor(t, "the read waits in its slot", func() bool { return !s.n.rd.idle() })
					}
					msg := fmt.Sprintf("request %d", i)
					_, err := c.Write([]byte(msg))
					require.NoError(t, err)
					r, err := h.Wait(ctx)
					require.NoError(t, err)
					require.NoError(t, r.Err)
					require.Equal(t, msg, string(r.Value.Bytes()))
					r.Value.Release()
					require.True(t, s.n.rd.idle(), "nothing left in the read slot")
				}
			})
		}
	}
}

// TestCancelledArmedReadGoesToNextRead: a pooled read cancelled while its
// receive is armed loses nothing: the data that arrives after goes to the
// next Read (the part that does not fit its buffer to the one after), or
// to the next pooled read.
func TestCancelledArmedReadGoesToNextRead(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, c := idlePair(t, bk)
			if s.n.ring.armer() == nil {
				t.Skip("the backend does not arm receives")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for _, next := range []string{"read", "pooled"} {
				rp := s.ReadPooled()
				h := SpawnOn(rt.Handle(), future.Future[future.Result[PooledBuf]](rp))
				waitFor(t, "the receive is armed", func() bool { return s.n.armStateNow() == armArmed })
				h.Cancel()
				_, _ = h.Wait(ctx)
				_, err := c.Write([]byte("0123456789"))
				require.NoError(t, err)
				switch next {
				case "read":
					got := make([]byte, 0, 10)
					for len(got) < 10 {
						buf := make([]byte, 4)
						r, err := BlockOn(ctx, rt.Handle(), s.Read(buf))
						require.NoError(t, err)
						require.NoError(t, r.Err)
						got = append(got, buf[:r.Value]...)
					}
					require.Equal(t, "0123456789", string(got))
				case "pooled":
					var got []byte
					for len(got) < 10 {
						r, err := BlockOn(ctx, rt.Handle(), s.ReadPooled())
						require.NoError(t, err)
						require.NoError(t, r.Err)
						got = append(got, r.Value.Bytes()...)
						r.Value.Release()
					}
					require.Equal(t, "0123456789", string(got))
				}
			}
		})
	}
}

// TestArmedReadClosed: closing a stream under a waiting pooled read ends
// it with ErrClosed, and a cancelled read's leftovers are given back.
func TestArmedReadClosed(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, _ := idlePair(t, bk)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			h := SpawnOn(rt.Handle(), future.Future[future.Result[PooledBuf]](s.ReadPooled()))
			waitFor(t, "the read waits", func() bool { return s.n.armStateNow() == armArmed || !s.n.rd.idle() })
			require.NoError(t, s.Close())
			r, err := h.Wait(ctx)
			require.NoError(t, err)
			require.ErrorIs(t, r.Err, ErrClosed)
			waitFor(t, "the armed receive ended", func() bool { return s.n.armStateNow() == armIdle })
		})
	}
}

// TestArmedReadInDump: a task waiting on an armed pooled read shows in the
// task dump as waiting on its socket's receive, as one waiting on an op
// does.
func TestArmedReadInDump(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, c := idlePair(t, bk)
			if s.n.ring.armer() == nil {
				t.Skip("the backend does not arm receives")
			}
			h := SpawnOn(rt.Handle(), future.Future[future.Result[PooledBuf]](s.ReadPooled()))
			waitFor(t, "the receive is armed", func() bool { return s.n.armStateNow() == armArmed })
			want := fmt.Sprintf("I/O recv fd %d", s.n.fd)
			var dump strings.Builder
			waitFor(t, "the dump shows the wait", func() bool {
				dump.Reset()
				require.NoError(t, rt.Dump(&dump))
				return strings.Contains(dump.String(), want)
			})
			_, err := c.Write([]byte("x"))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := h.Wait(ctx)
			require.NoError(t, err)
			require.NoError(t, r.Err)
			r.Value.Release()
		})
	}
}

// parkProbe reads with PollReadPooled until n messages came, and records
// at each wait whether the stream kept a future for the read (it should
// not while the receive is armed), and the reads' data.
type parkProbe struct {
	s       *TCPStream
	n       int
	got     []string
	waits   atomic.Int32 // the polls that returned not ready
	kept    atomic.Int32 // of those, the ones that left a future in the stream
	waiting atomic.Bool  // the last poll returned not ready
	read    atomic.Int32 // len(got)
}

func (p *parkProbe) Poll(cx *future.Context) (error, bool) {
	for len(p.got) < p.n {
		r, ok := p.s.PollReadPooled(cx)
		if !ok {
			p.waits.Add(1)
			if p.s.readPooled != nil || !p.s.pollingPooled {
				p.kept.Add(1)
			}
			p.waiting.Store(true)
			return nil, false
		}
		p.waiting.Store(false)
		if r.Err != nil {
			return r.Err, true
		}
		p.got = append(p.got, string(r.Value.Bytes()))
		p.read.Add(1)
		r.Value.Release()
	}
	return nil, true
}

func (p *parkProbe) Cancel() { p.s.CancelRead() }

// TestPollReadPooledParksItsFuture: a PollReadPooled that waits on the
// socket's armed receive keeps no future in the stream (it goes back to
// the pool and is rebuilt at the next poll), reads every message in
// order, and a Close while it waits so ends it with ErrClosed; a
// CancelRead while it waits loses nothing.
func TestPollReadPooledParksItsFuture(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, c := idlePair(t, bk)
			if s.n.ring.armer() == nil {
				t.Skip("the backend does not arm receives")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p := &parkProbe{s: s, n: 5}
			h := SpawnOn(rt.Handle(), future.Future[error](p))
			for i := range p.n {
				waitFor(t, "the read waits", func() bool { return p.waiting.Load() && s.n.armStateNow() == armArmed })
				_, err := c.Write(fmt.Appendf(nil, "message %d", i))
				require.NoError(t, err)
				waitFor(t, "the message is read", func() bool { return p.read.Load() == int32(i+1) })
			}
			err, werr := h.Wait(ctx)
			require.NoError(t, werr)
			require.NoError(t, err)
			require.Equal(t, []string{"message 0", "message 1", "message 2", "message 3", "message 4"}, p.got)
			require.Positive(t, p.waits.Load())
			require.Zero(t, p.kept.Load(), "waits that kept a future in the stream")

			// Cancelled while parked: the data that comes after goes to
			// the next read.
			p = &parkProbe{s: s, n: 1}
			h = SpawnOn(rt.Handle(), future.Future[error](p))
			waitFor(t, "the read waits", func() bool { return p.waiting.Load() && s.n.armStateNow() == armArmed })
			h.Cancel()
			_, _ = h.Wait(ctx)
			_, err = c.Write([]byte("after the cancel"))
			require.NoError(t, err)
			p = &parkProbe{s: s, n: 1}
			err, werr = SpawnOn(rt.Handle(), future.Future[error](p)).Wait(ctx)
			require.NoError(t, werr)
			require.NoError(t, err)
			require.Equal(t, []string{"after the cancel"}, p.got)

			// Closed while parked.
			p = &parkProbe{s: s, n: 1}
			h = SpawnOn(rt.Handle(), future.Future[error](p))
			waitFor(t, "the read waits", func() bool { return p.waiting.Load() && s.n.armStateNow() == armArmed })
			require.NoError(t, s.Close())
			err, werr = h.Wait(ctx)
			require.NoError(t, werr)
			require.ErrorIs(t, err, ErrClosed)
			require.ErrorIs(t, err, net.ErrClosed)
		})
	}
}
