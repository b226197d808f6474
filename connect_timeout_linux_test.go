package blitz_test

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTCPConnectTimeout connects to a listener whose accept queue is full:
// Linux drops the SYN, so the connect would wait for the kernel's retries
// (minutes); the connect's own timeout must end it, as a timeout error.
func TestTCPConnectTimeout(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	// Fill the accept queue (backlog 0 admits one, sometimes two).
	var fillers []net.Conn
	defer func() {
		for _, c := range fillers {
			c.Close()
		}
	}()
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		fillers = append(fillers, c)
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		start := time.Now()
		r := await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), addr, 100*time.Millisecond)))
		if r.Err == nil {
			r.Value.Close()
			t.Skip("the kernel accepted the connection: its accept queue was not full")
		}
		assert.ErrorIs(t, r.Err, os.ErrDeadlineExceeded)
		assert.ErrorIs(t, r.Err, blitz.ErrTimeout)
		var ne net.Error
		require.ErrorAs(t, r.Err, &ne)
		assert.True(t, ne.Timeout())
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.GreaterOrEqual(t, time.Since(start), 90*time.Millisecond)
	})
}
