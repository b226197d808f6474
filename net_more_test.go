package blitz_test

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUDPMulticast joins a group on the loopback interface and receives a
// datagram sent to it.
func TestUDPMulticast(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		lo := loopbackInterface(t)
		recv, err := blitz.BindUDP(rt.Handle(), "0.0.0.0:0")
		require.NoError(t, err)
		defer recv.Close()
		group := netip.MustParseAddr("239.255.42.99")
		if err := recv.JoinMulticast(group, lo); err != nil {
			t.Skip("no multicast on the loopback interface here:", err)
		}
		send, err := blitz.BindUDP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer send.Close()
		require.NoError(t, send.SetMulticastLoopback(true))
		dst := netip.AddrPortFrom(group, recv.LocalAddrPort().Port())
		buf := make([]byte, 32)
		recv.SetReadTimeout(2 * time.Second)
		rf := recv.RecvFrom(buf)
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[blitz.Datagram]](rf))
		st := send.SendTo([]byte("to the group"), dst)
		if r := await(t, rt, future.Future[future.Result[int]](st)); r.Err != nil {
			t.Skip("cannot send to a multicast group here:", r.Err)
		}
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		if errors.Is(r.Err, os.ErrDeadlineExceeded) {
			t.Skip("multicast not routed over loopback here")
		}
		d := ok(t, r)
		assert.Equal(t, "to the group", string(buf[:d.N]))
		assert.ErrorIs(t, recv.JoinMulticast(netip.MustParseAddr("10.1.2.3"), lo), backend.ErrInvalid, "not a group")
	})
}

func loopbackInterface(t *testing.T) *net.Interface {
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for i := range ifs {
		if ifs[i].Flags&net.FlagLoopback != 0 {
			return &ifs[i]
		}
	}
	t.Skip("no loopback interface")
	return nil
}

// TestTCPCloseRead: after CloseRead, reads see end of stream while writes
// still reach the peer.
func TestTCPCloseRead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		require.NoError(t, s.CloseRead())
		buf := make([]byte, 8)
		rd := s.Read(buf)
		assert.Equal(t, io.EOF, await(t, rt, future.Future[future.Result[int]](rd)).Err)
		w := s.WriteAll([]byte("still"))
		ok(t, await(t, rt, future.Future[future.Result[int]](w)))
		got := make([]byte, 5)
		_, err := peer.Read(got)
		require.NoError(t, err)
		assert.Equal(t, "still", string(got))
	})
}
