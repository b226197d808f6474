package blitz_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

// testPKI is a certificate authority made by the test, with a server
// certificate (for "localhost" and 127.0.0.1) and a client certificate it
// signed.
type testPKI struct {
	pool   *x509.CertPool
	server tls.Certificate
	client tls.Certificate
}

var (
	pkiOnce  sync.Once
	pkiMain  *testPKI
	pkiOther *testPKI
)

// testCerts returns the test's PKI and a second, unrelated one (the wrong
// CA), made once per test binary.
func testCerts(t testing.TB) (main, other *testPKI) {
	t.Helper()
	pkiOnce.Do(func() {
		pkiMain, pkiOther = makePKI(t), makePKI(t)
	})
	require.NotNil(t, pkiMain)
	return pkiMain, pkiOther
}

// makePKI makes a self-signed ECDSA CA and two leaves signed by it.
func makePKI(t testing.TB) *testPKI {
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "blitz test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) tls.Certificate {
		k := key()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		require.NoError(t, err)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	p := &testPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.server = leaf(2, "localhost", x509.ExtKeyUsageServerAuth)
	p.client = leaf(3, "blitz test client", x509.ExtKeyUsageClientAuth)
	return p
}

// serverConfig is a TLS server configuration with the PKI's certificate.
func (p *testPKI) serverConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.server}, MinVersion: tls.VersionTLS12}
}

// clientConfig is a TLS client configuration trusting the PKI's CA.
func (p *testPKI) clientConfig() *tls.Config {
	return &tls.Config{RootCAs: p.pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}

// tlsErrOf turns a fallible future into a future of its error.
func tlsErrOf[T any](f future.Future[future.Result[T]]) future.Future[error] {
	return future.Map(f, func(r future.Result[T]) error { return r.Err })
}

// chainFuture runs futures made by steps one after another, stopping at
// the first error: a task written as a sequence.
type chainFuture struct {
	steps []func() future.Future[error]
	cur   future.Future[error]
	i     int
}

func tlsChain(steps ...func() future.Future[error]) future.Future[error] {
	return &chainFuture{steps: steps}
}

func (c *chainFuture) Poll(cx *future.Context) (error, bool) {
	for {
		if c.cur == nil {
			if c.i == len(c.steps) {
				return nil, true
			}
			c.cur = c.steps[c.i]()
			c.i++
		}
		err, ok := c.cur.Poll(cx)
		if !ok {
			return nil, false
		}
		c.cur = nil
		if err != nil {
			return err, true
		}
	}
}

func (c *chainFuture) Cancel() { future.Cancel(c.cur) }

// tlsDo is a step that runs fn on the task.
func tlsDo(fn func() error) func() future.Future[error] {
	return func() future.Future[error] { return future.Ready(fn()) }
}

// tlsEchoHandler is a task-side TLS echo: handshake, copy everything back
// until the peer's close_notify, send close_notify, close.
func tlsEchoHandler(s *blitz.TLSStream) future.Future[error] {
	return future.Map(tlsChain(
		func() future.Future[error] { return tlsErrOf[struct{}](s.Handshake()) },
		func() future.Future[error] { return tlsErrOf[int64](blitz.Copy(s, s)) },
		func() future.Future[error] { return tlsErrOf[struct{}](s.CloseWrite()) },
	), func(err error) error {
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// goTLSEchoServer serves TLS echo with crypto/tls over Go's net, a
// goroutine per connection: read to the end, close_notify, close. It stops
// when the test ends.
func goTLSEchoServer(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := io.Copy(c, c); err == nil {
					_ = c.(*tls.Conn).CloseWrite()
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// goTLSEchoClient sends payload over a crypto/tls client connection to
// addr, with close_notify after it, and returns the SHA-256 of everything
// read back until the server's close_notify.
func goTLSEchoClient(addr string, cfg *tls.Config, payload []byte) ([32]byte, int64, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return [32]byte{}, 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(payload)
		if err == nil {
			err = c.CloseWrite()
		}
		werr <- err
	}()
	h := sha256.New()
	n, rerr := io.Copy(h, c)
	if err := <-werr; err != nil {
		return [32]byte{}, n, err
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, n, rerr
}

// testPayload returns n pseudo-random bytes (xorshift, 8 bytes a step).
func testPayload(n int) []byte {
	b := make([]byte, n+7)
	x := uint64(0x9e3779b97f4a7c15) ^ uint64(n)
	for i := 0; i < n; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	return b[:n:n]
}

// tlsLight reports whether the TLS tests trim their largest loads (under
// -short or the race detector): the 8 MiB echoes and the 200 idle
// connections then run on the automatic backend only.
func tlsLight() bool { return testing.Short() || tlsRace }

// tlsHeavyBackend reports whether the backend of cfg runs the largest
// loads: every backend normally, the automatic one only when tlsLight.
func tlsHeavyBackend(cfg blitz.Config) bool {
	return !tlsLight() || cfg.Backend == blitz.BackendAuto
}
