package httpserver_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
)

// TestConnectionTasksAreNamed: in a task dump, the accept loop and each
// connection task carry a name (the connections "http" and the listener's
// address), so that a stuck connection is found by name.
func TestConnectionTasksAreNamed(t *testing.T) {
	ts := startServer(t, blitz.Config{Workers: 1}, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})})
	c, br := rawConn(t, ts)
	getOver(t, c, br)
	// The connection is idle, kept alive: its task waits for the next request.
	want := "http " + ts.addr
	var names []string
	require.Eventually(t, func() bool {
		tasks, _ := ts.rt.Tasks()
		names = names[:0]
		conn, loop := false, false
		for _, ti := range tasks {
			names = append(names, ti.Name)
			conn = conn || ti.Name == want
			loop = loop || ti.Name == "http accept loop"
		}
		return conn && loop
	}, 10*time.Second, 5*time.Millisecond, "names: %s", strings.Join(names, ", "))
}

// TestIdleConnectionWithoutIdleBoundIsNotWoken: with ReadHeaderTimeout
// alone (no IdleTimeout, no ReadTimeout), a connection idle after a
// request waits without a bound, as in net/http: the timer that bounded
// its first request's header is let go, so that it neither stays with the
// idle connection nor wakes its task when it would have fired.
func TestIdleConnectionWithoutIdleBoundIsNotWoken(t *testing.T) {
	const headerTimeout = 100 * time.Millisecond
	ts := startServer(t, blitz.Config{Workers: 1}, &httpserver.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("ok"))
		}),
		ReadHeaderTimeout: headerTimeout,
	})
	c, br := rawConn(t, ts)
	// The first request comes after the connection's task began to wait
	// for it, bounded by the header timeout: the timer is made and armed.
	time.Sleep(20 * time.Millisecond)
	getOver(t, c, br)
	want := "http " + ts.addr
	polls := func() uint32 {
		tasks, _ := ts.rt.Tasks()
		for _, ti := range tasks {
			if ti.Name == want {
				return ti.Polls
			}
		}
		return 0
	}
	// The count is taken once the task has settled: a write's completion
	// may still be on its way (IOCP delivers it after the client has the
	// response), and the poll that takes it is not a wake for nothing.
	// The settling takes two looks 10 ms apart, well inside the header
	// bound, whose timer would fire about 100 ms after it was armed.
	var before uint32
	require.Eventually(t, func() bool {
		before = polls()
		time.Sleep(10 * time.Millisecond)
		return before > 0 && polls() == before
	}, 10*time.Second, time.Millisecond)
	time.Sleep(3 * headerTimeout) // past the first request's header bound
	require.Equal(t, before, polls(), "the idle connection's task was polled with nothing to do")
	// The connection still serves.
	getOver(t, c, br)
}

// getOver sends a GET on c and reads its response, whose body it closes.
func getOver(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	_, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}
