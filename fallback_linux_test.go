package blitz_test

import (
	"os"
	"os/exec"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	uring "github.com/blitz-go/blitz/backend-uring"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFallbackToEpollWhenURingRefused runs in a child process that forbids
// io_uring_setup with a seccomp filter, as container runtimes' default
// profiles do: the automatic choice must fall back to epoll and serve I/O,
// and forcing io_uring must fail with ErrBackend.
func TestFallbackToEpollWhenURingRefused(t *testing.T) {
	if os.Getenv("BLITZ_DENY_URING_CHILD") == "1" {
		require.NoError(t, uring.DenySetupForTest())
		rt := newRuntime(t, blitz.Config{Workers: 2})
		assert.Equal(t, blitz.BackendEpoll, rt.Backend())
		_, err := blitz.New(blitz.Config{Backend: blitz.BackendURing})
		assert.ErrorIs(t, err, blitz.ErrBackend)
		assert.ErrorIs(t, err, backend.ErrUnsupported)
		// And I/O works on the fallback.
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		go func() { _ = echoClient(l.AddrPort().String(), 0, 1) }()
		acc := l.Accept()
		s := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](acc)))
		defer s.Close()
		n := await(t, rt, future.Future[int](&echoConn{s: s}))
		assert.Equal(t, len("client 0 round 0"), n)
		return
	}
	if goruntime.GOARCH != "amd64" && goruntime.GOARCH != "arm64" {
		t.Skip("the seccomp filter is written for amd64 and arm64")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackToEpollWhenURingRefused$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "BLITZ_DENY_URING_CHILD=1")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestFallbackToEpollWhenURingRefused")
}
