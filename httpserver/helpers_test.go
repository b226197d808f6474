package httpserver_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

// testBackends are the backends the conformance tests run on: the
// automatic choice (io_uring where the kernel allows it) and epoll forced,
// where they exist.
func testBackends(t *testing.T) []string {
	names := []string{blitz.BackendAuto}
	rt, err := blitz.New(blitz.Config{Workers: 1, Backend: blitz.BackendEpoll})
	if err == nil {
		require.NoError(t, rt.Shutdown(context.Background()))
		names = append(names, blitz.BackendEpoll)
	}
	return names
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, cfg blitz.Config)) {
	for _, name := range testBackends(t) {
		label := name
		if label == "" {
			label = "auto"
		}
		t.Run(label, func(t *testing.T) { f(t, blitz.Config{Workers: 2, Backend: name}) })
	}
}

// testServer is a Server serving on a runtime of its own, torn down by
// t.Cleanup: the server is shut down (bounded), then the runtime.
type testServer struct {
	rt   *blitz.Runtime
	srv  *httpserver.Server
	addr string
	errc chan error
}

func startServer(t testing.TB, cfg blitz.Config, srv *httpserver.Server) *testServer {
	t.Helper()
	rt, err := blitz.New(cfg)
	require.NoError(t, err)
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		_ = rt.Shutdown(context.Background())
		require.NoError(t, err)
	}
	ts := &testServer{rt: rt, srv: srv, addr: l.AddrPort().String(), errc: make(chan error, 1)}
	go func() { ts.errc <- srv.Serve(rt.Handle(), l) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop shuts the server down and checks that Serve returned
// ErrServerClosed; idempotent.
func (ts *testServer) stop(t testing.TB) {
	if ts.rt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := ts.srv.Shutdown(ctx)
	select {
	case serr := <-ts.errc:
		if !errors.Is(serr, http.ErrServerClosed) {
			t.Errorf("Serve returned %v", serr)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Serve did not return after Shutdown")
	}
	if err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	require.NoError(t, ts.rt.Shutdown(ctx))
	ts.rt = nil
}

func (ts *testServer) url(path string) string { return "http://" + ts.addr + path }

// client returns an http.Client of its own transport, closed at cleanup.
func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// rawConn dials the server for hand-written requests.
func rawConn(t *testing.T, ts *testServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", ts.addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	return c, bufio.NewReader(c)
}
