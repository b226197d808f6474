package httpserver_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

// plainConn is a Conn that is only a stream (as a TLS stream would be):
// no pooled reads, no CloseWrite.
type plainConn struct{ s *blitz.TCPStream }

func (p plainConn) PollRead(cx *future.Context, b []byte) (future.Result[int], bool) {
	return p.s.PollRead(cx, b)
}
func (p plainConn) CancelRead() { p.s.CancelRead() }
func (p plainConn) PollWrite(cx *future.Context, b []byte) (future.Result[int], bool) {
	return p.s.PollWrite(cx, b)
}
func (p plainConn) CancelWrite()         { p.s.CancelWrite() }
func (p plainConn) Close() error         { return p.s.Close() }
func (p plainConn) LocalAddr() net.Addr  { return p.s.LocalAddr() }
func (p plainConn) RemoteAddr() net.Addr { return p.s.RemoteAddr() }

// ServeConn serves a connection accepted elsewhere, through the Conn
// interface alone (a buffer of its own instead of the pool): keep-alive,
// bodies both ways, a malformed request; Shutdown waits for it.
func TestServeConnPlainStream(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt, err := blitz.New(cfg)
		require.NoError(t, err)
		defer rt.Shutdown(context.Background())
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		srv := &httpserver.Server{Handler: helloHandler()}
		accepted := make(chan error, 1)
		go func() {
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				r, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](l.Accept()))
				cancel()
				if err == nil {
					err = r.Err
				}
				if err != nil {
					accepted <- err
					return
				}
				if err := srv.ServeConn(rt.Handle(), plainConn{r.Value}); err != nil {
					accepted <- err
					return
				}
			}
		}()
		base := "http://" + l.AddrPort().String()
		c := newClient(t)
		for i := 0; i < 3; i++ {
			body := strings.Repeat("p", i*5000)
			resp, err := c.Post(base+"/echo", "text/plain", strings.NewReader(body))
			require.NoError(t, err)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, body, string(got))
		}
		conn, err := net.Dial("tcp", l.AddrPort().String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "GET / HTTP/1.1\r\n\r\n")
		require.NoError(t, err)
		b, _ := io.ReadAll(conn)
		require.True(t, strings.HasPrefix(string(b), "HTTP/1.1 400 "), "%q", b)

		c.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.NoError(t, l.Close())
		require.Error(t, <-accepted)
		require.ErrorIs(t, srv.ServeConn(rt.Handle(), nil), httpserver.ErrNilConn)
		require.ErrorIs(t, srv.Serve(rt.Handle(), l), http.ErrServerClosed, "no serving after Shutdown")
	})
}

// Serve on a listener closed under it returns an error matching
// net.ErrClosed, not nil.
func TestServeListenerClosed(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	require.NoError(t, err)
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	srv := &httpserver.Server{ErrorLog: log.New(io.Discard, "", 0)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(rt.Handle(), l) }()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, l.Close())
	select {
	case err := <-errc:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	require.NoError(t, srv.Shutdown(context.Background()))
}
