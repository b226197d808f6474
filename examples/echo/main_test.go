package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz/examples/internal/echotest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEchoServer runs the async server through the test every echo server
// passes.
func TestEchoServer(t *testing.T) { echotest.Server(t, serve) }

// TestEchoCountsConnectionsOpenAtStop: see echotest.CountsConnectionsOpenAtStop.
func TestEchoCountsConnectionsOpenAtStop(t *testing.T) {
	echotest.CountsConnectionsOpenAtStop(t, serve)
}

// TestDebugEndpoints: with -debug, the console, the task dump (which names
// the connection tasks) and the metrics are served while the server runs.
func TestDebugEndpoints(t *testing.T) {
	debugAddr = "127.0.0.1:0"
	defer func() { debugAddr = "" }()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, "127.0.0.1:0", time.Second, out, ready) }()
	addr := <-ready
	m := regexp.MustCompile(`console on (http://[^ ]+)/console/`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "no console address in %q", out.String())
	base := m[1]

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("ping"))
	require.NoError(t, err)
	buf := make([]byte, 4)
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)

	get := func(path string) string {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}
	require.Eventually(t, func() bool {
		return strings.Contains(get("/debug/tasks"), `"echo connection"`)
	}, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, get("/debug/tasks"), `"accept loop"`)
	require.Contains(t, get("/metrics"), "blitz_tasks_live ")
	require.Contains(t, get("/console/"), "<title>blitz console</title>")
	require.Contains(t, get("/console/state"), `"name":"echo connection"`)

	c.Close()
	cancel()
	require.NoError(t, <-done)
}

// syncWriter collects what serve prints, for a reader on another goroutine.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestEchoStateSize pins the size of echo's state machine, what each
// connection's handler costs besides its task and its socket: 64 bytes (a
// size class), with err, which lives across no await, a local of Poll.
func TestEchoStateSize(t *testing.T) {
	if n := unsafe.Sizeof(echoAsyncFuture{}); n > 64 {
		t.Fatalf("echoAsyncFuture is %d bytes, want <= 64", n)
	}
}
