package httpserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

// listenAndServe runs serve(addr) on a goroutine with a port free a moment
// before, and returns the channel of its result once a GET through client
// is answered; it tries another port if serve failed (another process took
// the port in between), five at most.
func listenAndServe(t *testing.T, scheme string, client *http.Client, serve func(addr string) error) chan error {
	t.Helper()
	var last error
	for range 5 {
		nl, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := nl.Addr().String()
		require.NoError(t, nl.Close())
		served := make(chan error, 1)
		go func() { served <- serve(addr) }()
		if last = awaitHello(scheme, addr, client, served); last == nil {
			return served
		}
	}
	t.Fatalf("no port served in five tries: %v", last)
	return nil
}

// awaitHello GETs /hello from addr until it is answered, serve ended (its
// error) or 20 seconds passed.
func awaitHello(scheme, addr string, client *http.Client, served chan error) error {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-served:
			return fmt.Errorf("serve on %s ended: %w", addr, err)
		default:
		}
		resp, err := client.Get(scheme + "://" + addr + "/hello")
		if err != nil {
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if want := "hello over " + scheme; string(b) != want {
			return fmt.Errorf("GET %s answered %q, want %q", addr, b, want)
		}
		return nil
	}
	return fmt.Errorf("%s never answered", addr)
}

// schemeHandler answers "<path> over <scheme>".
func schemeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		fmt.Fprintf(w, "%s over %s", r.URL.Path[1:], scheme)
	})
}

// shutdownServed shuts srv down and checks that its ListenAndServe
// returned ErrServerClosed, and that a later one returns it at once.
func shutdownServed(t *testing.T, srv *httpserver.Server, served chan error, again func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
	require.ErrorIs(t, <-served, http.ErrServerClosed)
	require.ErrorIs(t, again(), http.ErrServerClosed, "after Shutdown")
}

// ListenAndServe listens and serves until Shutdown, which it reports as
// ErrServerClosed, as net/http's does; a bad address is a listen error.
func TestListenAndServe(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt, err := blitz.New(cfg)
		require.NoError(t, err)
		defer rt.Shutdown(context.Background())
		h := rt.Handle()

		bad := &httpserver.Server{Handler: schemeHandler()}
		var op *net.OpError
		require.ErrorAs(t, bad.ListenAndServe(h, "127.0.0.1:99999"), &op)
		require.Equal(t, "listen", op.Op)

		srv := &httpserver.Server{Handler: schemeHandler()}
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		served := listenAndServe(t, "http", &http.Client{Transport: tr, Timeout: 20 * time.Second}, func(addr string) error {
			return srv.ListenAndServe(h, addr)
		})
		tr.CloseIdleConnections()
		shutdownServed(t, srv, served, func() error { return srv.ListenAndServe(h, "127.0.0.1:0") })
	})
}

// ListenAndServeTLS serves HTTPS with the certificate and key of two PEM
// files; missing files are its error, before any listen.
func TestListenAndServeTLS(t *testing.T) {
	rt, err := blitz.New(blitz.Config{})
	require.NoError(t, err)
	defer rt.Shutdown(context.Background())
	h := rt.Handle()

	cert, pool := selfSigned(t)
	// Not t.TempDir: under Wine its removal fails ("Invalid function").
	dir, err := os.MkdirTemp("", "httpserver-tls")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))

	srv := &httpserver.Server{Handler: schemeHandler()}
	require.ErrorIs(t, srv.ListenAndServeTLS(h, "127.0.0.1:0", filepath.Join(dir, "none.pem"), keyFile), os.ErrNotExist)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	served := listenAndServe(t, "https", &http.Client{Transport: tr, Timeout: 20 * time.Second}, func(addr string) error {
		return srv.ListenAndServeTLS(h, addr, certFile, keyFile)
	})
	tr.CloseIdleConnections()
	shutdownServed(t, srv, served, func() error { return srv.ListenAndServeTLS(h, "127.0.0.1:0", certFile, keyFile) })
}

// RegisterOnShutdown's functions run, each on a goroutine of its own, at
// every Shutdown (while a hijacked connection the server no longer sees
// is still open, for them to end), and not at Close.
func TestRegisterOnShutdown(t *testing.T) {
	hijacked := make(chan net.Conn, 1)
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		hijacked <- c
	})}
	calls := make(chan string, 4)
	var hc net.Conn // the hijacked connection, set before the Shutdown that reads it
	srv.RegisterOnShutdown(func() { calls <- "first" })
	srv.RegisterOnShutdown(func() {
		hc.Close() // the server no longer sees it: ending it is this function's job
		calls <- "second"
	})
	ts := startServer(t, blitz.Config{}, srv)
	c, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	select {
	case hc = <-hijacked:
	case <-time.After(10 * time.Second):
		t.Fatal("no hijack")
	}

	ts.stop(t) // Shutdown, then the runtime's
	got := map[string]bool{}
	for range 2 {
		select {
		case name := <-calls:
			got[name] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("called: %v", got)
		}
	}
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the hijacked connection was closed by the registered function")

	closeOnly := &httpserver.Server{}
	closeOnly.RegisterOnShutdown(func() { t.Error("called by Close") })
	require.NoError(t, closeOnly.Close())
	time.Sleep(50 * time.Millisecond)
}

// SetKeepAlivesEnabled(false) closes the connections idle after a request
// and makes each response close its connection (a new one still gets its
// first request answered); true brings keep-alives back. The same scenario
// runs against net/http's server, which must behave alike.
func TestSetKeepAlivesEnabled(t *testing.T) {
	scenario := func(t *testing.T, addr string, set func(bool)) {
		request := func(c net.Conn, r *bufio.Reader) *http.Response {
			t.Helper()
			_, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			require.NoError(t, err)
			resp, err := http.ReadResponse(r, nil)
			require.NoError(t, err)
			_, err = io.Copy(io.Discard, resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			return resp
		}
		dial := func() (net.Conn, *bufio.Reader) {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
			return c, bufio.NewReader(c)
		}
		closedByServer := func(c net.Conn, r *bufio.Reader) {
			t.Helper()
			_, err := r.ReadByte()
			require.ErrorIs(t, err, io.EOF)
		}

		idle, idleR := dial()
		require.False(t, request(idle, idleR).Close, "keep-alive at first")
		set(false)
		closedByServer(idle, idleR)

		c, r := dial()
		require.True(t, request(c, r).Close, "a new connection's response closes it")
		closedByServer(c, r)

		set(true)
		c, r = dial()
		require.False(t, request(c, r).Close)
		require.False(t, request(c, r).Close, "a second request on the same connection")
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	t.Run("net/http", func(t *testing.T) {
		ts := httptest.NewServer(h)
		defer ts.Close()
		scenario(t, ts.Listener.Addr().String(), ts.Config.SetKeepAlivesEnabled)
	})
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		srv := &httpserver.Server{Handler: h}
		scenario(t, startServer(t, cfg, srv).addr, srv.SetKeepAlivesEnabled)
	})
}
