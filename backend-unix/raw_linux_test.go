package unixio_test

import (
	"net/netip"
	"testing"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestRawSockaddrRoundTrip(t *testing.T) {
	for _, a := range []backend.Addr{
		backend.AddrPort(netip.MustParseAddrPort("10.1.2.3:65535")),
		backend.AddrPort(netip.MustParseAddrPort("[2001:db8::7]:1")),
		backend.UnixAddr("/run/x.sock"),
		backend.UnixAddr("@abstract"),
		backend.UnixAddr(""),
	} {
		var raw unix.RawSockaddrAny
		n, err := unixio.EncodeRaw(a, &raw)
		require.NoError(t, err, a)
		assert.Equal(t, a, unixio.DecodeRaw(&raw, n), a)
	}
}

// The kernel agrees with EncodeRaw: bind a raw-encoded address and read it
// back with getsockname.
func TestRawSockaddrKernelAgrees(t *testing.T) {
	var c unixio.Control
	fd, err := c.Socket(backend.FamilyUnix, backend.Stream)
	require.NoError(t, err)
	defer c.CloseFD(fd)
	a := backend.UnixAddr("@blitz-test-raw")
	var raw unix.RawSockaddrAny
	n, err := unixio.EncodeRaw(a, &raw)
	require.NoError(t, err)
	require.NoError(t, c.Bind(fd, a))
	got, err := c.LocalAddr(fd)
	require.NoError(t, err)
	assert.Equal(t, a, got)
	assert.Equal(t, a, unixio.DecodeRaw(&raw, n))
}

func TestRawSockaddrErrors(t *testing.T) {
	var raw unix.RawSockaddrAny
	_, err := unixio.EncodeRaw(backend.Addr{}, &raw)
	assert.ErrorIs(t, err, backend.ErrInvalid)
	long := make([]byte, 200)
	for i := range long {
		long[i] = 'a'
	}
	_, err = unixio.EncodeRaw(backend.UnixAddr(string(long)), &raw)
	assert.ErrorIs(t, err, backend.ErrInvalid)
	assert.Equal(t, backend.Addr{}, unixio.DecodeRaw(&unix.RawSockaddrAny{}, 0))
}
