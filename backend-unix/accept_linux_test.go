package unixio_test

import (
	"net"
	"net/netip"
	"testing"

	unixio "github.com/blitz-go/blitz/backend-unix"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestAccept4AndPeerAddr: the stack-decoded accept and getpeername give the
// client's address, as x/sys's do, the accepted socket is non-blocking and
// close-on-exec, and neither allocates.
func TestAccept4AndPeerAddr(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "tcp6" {
				addr = "[::1]:0"
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Skipf("no %s here: %v", network, err)
			}
			defer ln.Close()
			f, err := ln.(*net.TCPListener).File() // a blocking duplicate of the listener
			require.NoError(t, err)
			defer f.Close()
			lfd := int(f.Fd())
			c, err := net.Dial(network, ln.Addr().String())
			require.NoError(t, err)
			defer c.Close()

			nfd, peer, err := unixio.Accept4(lfd)
			require.NoError(t, err)
			defer unix.Close(nfd)
			want := netip.MustParseAddrPort(c.LocalAddr().String())
			require.Equal(t, want, peer.IP)
			fl, err := unix.FcntlInt(uintptr(nfd), unix.F_GETFL, 0)
			require.NoError(t, err)
			require.NotZero(t, fl&unix.O_NONBLOCK, "accepted socket is blocking")
			fd, err := unix.FcntlInt(uintptr(nfd), unix.F_GETFD, 0)
			require.NoError(t, err)
			require.NotZero(t, fd&unix.FD_CLOEXEC, "accepted socket lacks close-on-exec")

			got, err := unixio.PeerAddr(nfd)
			require.NoError(t, err)
			require.Equal(t, peer, got)
			sa, err := unix.Getpeername(nfd)
			require.NoError(t, err)
			require.Equal(t, unixio.FromSockaddr(sa), got)
			if !raceOn {
				require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = unixio.PeerAddr(nfd) }))
			}

			_, err = unixio.PeerAddr(lfd)
			require.ErrorIs(t, err, unix.ENOTCONN)
		})
	}
}
