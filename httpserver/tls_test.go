package httpserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "httpserver test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// The runtime's TLS streams are Conns: HTTPS through ServeAcceptor on a
// TLSListener, with Request.TLS set and keep-alive over the TLS connection.
func TestServeTLS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cert, pool := selfSigned(t)
		rt, err := blitz.New(cfg)
		require.NoError(t, err)
		defer rt.Shutdown(context.Background())
		l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
		require.NoError(t, err)
		defer l.Close()
		srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS == nil || !r.TLS.HandshakeComplete {
				http.Error(w, "no TLS state", 500)
				return
			}
			fmt.Fprintf(w, "%s over %s", r.URL.Path, tls.VersionName(r.TLS.Version))
		})}
		served := make(chan error, 1)
		go func() { served <- httpserver.ServeAcceptor[*blitz.TLSStream](srv, rt.Handle(), l) }()
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
		addr := l.Addr().String()
		for i := 0; i < 3; i++ {
			resp, err := c.Get(fmt.Sprintf("https://%s/r%d", addr, i))
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, fmt.Sprintf("/r%d over TLS 1.3", i), string(b))
		}
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-served, http.ErrServerClosed)
	})
}

// Plain HTTP sent to the TLS port gets net/http's plain-text 400, byte for
// byte (both servers answer it), then the close; a TLS client that follows
// on the same listener is served.
func TestPlainHTTPToTLSPort(t *testing.T) {
	cert, pool := selfSigned(t)
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })

	// net/http's answer, the reference.
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ref := &http.Server{Handler: handler, TLSConfig: cfg, ErrorLog: log.New(io.Discard, "", 0)}
	refDone := make(chan struct{})
	go func() { _ = ref.ServeTLS(nl, "", ""); close(refDone) }()
	defer func() { ref.Close(); <-refDone }()

	rt, err := blitz.New(blitz.Config{Workers: 2})
	require.NoError(t, err)
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	srv := &httpserver.Server{Handler: handler}
	served := make(chan error, 1)
	go func() { served <- httpserver.ServeAcceptor[*blitz.TLSStream](srv, rt.Handle(), l) }()

	plain := func(addr string, req string) string {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = io.WriteString(c, req)
		require.NoError(t, err)
		b, _ := io.ReadAll(c) // up to the server's close
		return string(b)
	}
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi",
		"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		want := plain(nl.Addr().String(), req)
		require.Equal(t, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n", want, "net/http's answer")
		require.Equal(t, want, plain(l.Addr().String(), req), "%q", req)
	}
	// Bytes that are neither TLS nor a request line: closed without a word, as net/http does.
	require.Equal(t, plain(nl.Addr().String(), "hello there\r\n"), plain(l.Addr().String(), "hello there\r\n"))

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 20 * time.Second}).Get("https://" + l.Addr().String() + "/")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "ok", string(b))
	tr.CloseIdleConnections()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
	require.ErrorIs(t, <-served, http.ErrServerClosed)
}
