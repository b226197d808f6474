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
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/runtime"
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
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
		cert, pool := selfSigned(t)
		rt, err := runtime.New(cfg)
		require.NoError(t, err)
		defer rt.Shutdown(context.Background())
		l, err := runtime.ListenTLS(rt.Handle(), "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
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
		go func() { served <- httpserver.ServeAcceptor[*runtime.TLSStream](srv, rt.Handle(), l) }()
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
