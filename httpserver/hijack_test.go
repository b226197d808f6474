package httpserver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

// A handler hijacks the connection (as a WebSocket library does): it gets
// the bytes the client sent past the request, then the stream itself;
// Shutdown no longer waits for it.
func TestHijack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		handlerDone := make(chan error, 1)
		srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				handlerDone <- err
				return
			}
			defer conn.Close()
			if _, err := w.Write([]byte("x")); err != http.ErrHijacked {
				handlerDone <- err
				return
			}
			_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
			_ = brw.Flush()
			for {
				line, err := brw.ReadString('\n')
				if err != nil {
					handlerDone <- nil
					return
				}
				_, _ = brw.WriteString("echo: " + line)
				_ = brw.Flush()
			}
		})}
		ts := startServer(t, cfg, srv)
		c, br := rawConn(t, ts)
		// The first line rides with the request: the server has read it.
		_, err := io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nfirst\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "echo: first\n", line)

		// Shutdown does not wait for the hijacked connection.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))

		_, err = io.WriteString(c, "second\n")
		require.NoError(t, err)
		line, err = br.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "echo: second\n", line)
		require.NoError(t, c.Close())
		require.NoError(t, <-handlerDone)
	})
}

// Hijack is refused where it cannot be honoured: a TaskHandler, or a
// connection that is not one of the runtime's sockets.
func TestHijackUnsupported(t *testing.T) {
	got := make(chan error, 1)
	ts := startServer(t, blitz.Config{Workers: 2}, &httpserver.Server{TaskHandler: httpserver.TaskHandlerFunc(func(w http.ResponseWriter, r *http.Request) future.Future[struct{}] {
		_, _, err := w.(http.Hijacker).Hijack()
		got <- err
		return nil
	})})
	resp, err := newClient(t).Get(ts.url("/"))
	require.NoError(t, err)
	resp.Body.Close()
	require.ErrorIs(t, <-got, http.ErrNotSupported)
}

// Close cancels the context of a handler that hijacked its connection and
// still runs, as it does a handler's that did not.
func TestHijackedContextCancelledByClose(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		hijacked := make(chan struct{})
		done := make(chan error, 1)
		srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				done <- err
				return
			}
			defer conn.Close()
			close(hijacked)
			select {
			case <-r.Context().Done():
				done <- r.Context().Err()
			case <-time.After(10 * time.Second):
				done <- errors.New("the context was not cancelled")
			}
		})}
		ts := startServer(t, cfg, srv)
		c, _ := rawConn(t, ts)
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		select {
		case <-hijacked:
		case err := <-done:
			t.Fatalf("Hijack: %v", err)
		}
		require.NoError(t, srv.Close())
		require.ErrorIs(t, <-done, context.Canceled)
		ts.stop(t)
	})
}
