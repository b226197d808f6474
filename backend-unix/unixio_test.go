//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio_test

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestSockaddrRoundTrip(t *testing.T) {
	for _, a := range []backend.Addr{
		backend.AddrPort(netip.MustParseAddrPort("127.0.0.1:8080")),
		backend.AddrPort(netip.MustParseAddrPort("[::1]:443")),
		backend.AddrPort(netip.MustParseAddrPort("[fe80::1%1]:53")),
		backend.UnixAddr("/tmp/blitz.sock"),
	} {
		sa, err := unixio.Sockaddr(a)
		require.NoError(t, err, a)
		back := unixio.FromSockaddr(sa)
		assert.Equal(t, a.Family, back.Family, a)
		assert.Equal(t, a.Path, back.Path, a)
		assert.Equal(t, a.IP.Port(), back.IP.Port(), a)
		assert.Equal(t, a.IP.Addr().WithZone(""), back.IP.Addr().WithZone(""), a)
	}
}

func TestSockaddrErrors(t *testing.T) {
	_, err := unixio.Sockaddr(backend.Addr{})
	assert.ErrorIs(t, err, backend.ErrInvalid)
	_, err = unixio.Sockaddr(backend.Addr{Family: backend.FamilyInet4, IP: netip.MustParseAddrPort("[::1]:1")})
	assert.ErrorIs(t, err, backend.ErrInvalid)
	_, err = unixio.Domain(backend.Family(99))
	assert.ErrorIs(t, err, backend.ErrInvalid)
}

func TestErrnoMapping(t *testing.T) {
	cases := map[syscall.Errno]error{
		unix.ECONNRESET:   backend.ErrConnReset,
		unix.ECONNREFUSED: backend.ErrConnRefused,
		unix.EPIPE:        backend.ErrBrokenPipe,
		unix.EMFILE:       backend.ErrTooManyFiles,
		unix.ENFILE:       backend.ErrTooManyFiles,
		unix.EADDRINUSE:   backend.ErrAddrInUse,
		unix.ENOENT:       backend.ErrNotExist,
		unix.ETIMEDOUT:    backend.ErrTimedOut,
		unix.EIO:          backend.ErrIO,
	}
	for errno, want := range cases {
		err := unixio.Error("recv", errno)
		assert.ErrorIs(t, err, want, errno)
		assert.ErrorIs(t, err, errno, "the code stays reachable")
		var be *backend.Error
		require.True(t, errors.As(err, &be))
		assert.Equal(t, "recv", be.Op)
	}
	assert.Same(t, backend.ErrCanceled, unixio.ErrnoError("recv", unix.ECANCELED))
	assert.NoError(t, unixio.Error("recv", nil))
	assert.NoError(t, unixio.ErrnoError("recv", 0))
	other := errors.New("not an errno")
	assert.ErrorIs(t, unixio.Error("x", other), backend.ErrIO)
	assert.ErrorIs(t, unixio.Error("x", other), other)
}

func TestControlSocketOptions(t *testing.T) {
	var c unixio.Control
	fd, err := c.Socket(backend.FamilyInet4, backend.Stream)
	require.NoError(t, err)
	defer c.CloseFD(fd)
	require.NoError(t, c.SetOption(fd, backend.OptReuseAddr, 1))
	require.NoError(t, c.Bind(fd, backend.AddrPort(netip.MustParseAddrPort("127.0.0.1:0"))))
	require.NoError(t, c.Listen(fd, 0))
	la, err := c.LocalAddr(fd)
	require.NoError(t, err)
	assert.Equal(t, backend.FamilyInet4, la.Family)
	assert.NotZero(t, la.IP.Port())
	_, err = c.PeerAddr(fd)
	assert.ErrorIs(t, err, backend.ErrNotConnected)

	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	assert.NotZero(t, fl&unix.O_NONBLOCK, "sockets are non-blocking")

	for _, tc := range []struct {
		opt  backend.Option
		set  int
		want int
	}{
		{backend.OptNoDelay, 1, 1},
		{backend.OptNoDelay, 0, 0},
		{backend.OptKeepAlive, 30, 30},
		{backend.OptKeepAlive, 0, 0},
		{backend.OptLinger, 0, 0},
		{backend.OptLinger, 5, 5},
		{backend.OptLinger, -1, -1},
		{backend.OptBroadcast, 1, 1},
	} {
		require.NoError(t, c.SetOption(fd, tc.opt, tc.set), tc.opt)
		got, err := c.Option(fd, tc.opt)
		require.NoError(t, err, tc.opt)
		assert.Equal(t, tc.want, got, "option %d set to %d", tc.opt, tc.set)
	}
	v, err := c.Option(fd, backend.OptError)
	require.NoError(t, err)
	assert.Zero(t, v)
	assert.ErrorIs(t, c.SetOption(fd, backend.OptError, 1), backend.ErrInvalid)
	assert.ErrorIs(t, c.SetOption(fd, backend.Option(200), 1), backend.ErrInvalid)
	assert.ErrorIs(t, c.Shutdown(fd, backend.ShutdownHow(9)), backend.ErrInvalid)
}

func TestControlIPv4OnIPv6Socket(t *testing.T) {
	var c unixio.Control
	fd, err := c.Socket(backend.FamilyInet6, backend.Datagram)
	if err != nil {
		t.Skip("no IPv6:", err)
	}
	defer c.CloseFD(fd)
	require.NoError(t, c.SetOption(fd, backend.OptV6Only, 0))
	// An IPv4 address bound on a dual-stack socket is mapped.
	require.NoError(t, c.Bind(fd, backend.AddrPort(netip.MustParseAddrPort("127.0.0.1:0"))))
	la, err := c.LocalAddr(fd)
	require.NoError(t, err)
	assert.True(t, la.IP.Addr().Is4In6(), la)
}

func TestControlJoinGroupRejectsUnicast(t *testing.T) {
	var c unixio.Control
	fd, err := c.Socket(backend.FamilyInet4, backend.Datagram)
	require.NoError(t, err)
	defer c.CloseFD(fd)
	assert.ErrorIs(t, c.JoinGroup(fd, netip.MustParseAddr("10.0.0.1"), 0), backend.ErrInvalid)
}

func TestControlOpenFile(t *testing.T) {
	var c unixio.Control
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	_, err := c.OpenFile(p, backend.OpenRead, 0)
	assert.ErrorIs(t, err, backend.ErrNotExist)
	assert.ErrorIs(t, err, os.ErrNotExist, "the errno matches the os sentinel too")
	fd, err := c.OpenFile(p, backend.OpenWrite|backend.OpenCreate|backend.OpenExclusive, 0o600)
	require.NoError(t, err)
	require.NoError(t, c.CloseFD(fd))
	_, err = c.OpenFile(p, backend.OpenWrite|backend.OpenCreate|backend.OpenExclusive, 0o600)
	assert.ErrorIs(t, err, backend.ErrFileExists)
	_, err = c.OpenFile(p, 0, 0)
	assert.ErrorIs(t, err, backend.ErrInvalid)
	assert.ErrorIs(t, c.CloseFD(fd), backend.ErrClosed, "closing twice is EBADF")
}

// Read and Send (raw system calls on Linux) behave as read(2) and send(2):
// EAGAIN on an empty non-blocking socket, the bytes, 0 at the peer's
// close, EPIPE without SIGPIPE after it, EBADF for a bad descriptor, and
// errors that compare equal to x/sys/unix's.
func TestReadSend(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	for _, fd := range fds {
		require.NoError(t, unix.SetNonblock(fd, true))
	}
	defer unix.Close(fds[0])
	buf := make([]byte, 16)
	n, err := unixio.Read(fds[0], buf)
	assert.Equal(t, 0, n)
	assert.Equal(t, unix.EAGAIN, err)
	n, err = unixio.Send(fds[1], []byte("hello"))
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	n, err = unixio.Read(fds[0], buf)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(buf[:n]))
	n, err = unixio.Send(fds[1], nil)
	assert.NoError(t, err)
	assert.Equal(t, 0, n)
	require.NoError(t, unix.Close(fds[1]))
	n, err = unixio.Read(fds[0], buf)
	assert.NoError(t, err, "end of stream")
	assert.Equal(t, 0, n)
	_, err = unixio.Send(fds[0], []byte("x"))
	assert.Equal(t, unix.EPIPE, err, "no SIGPIPE: the test would die of it")
	_, err = unixio.Read(-1, buf)
	assert.Equal(t, unix.EBADF, err)
	_, err = unixio.Send(-1, buf)
	assert.Equal(t, unix.EBADF, err)
}
