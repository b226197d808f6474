package httpserver_test

import (
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
	_, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
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
