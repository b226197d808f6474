package websocket

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
)

// selfSigned returns a server configuration with a self-signed
// certificate for 127.0.0.1 and localhost, and a pool that trusts it.
func selfSigned(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "websocket test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

// upgradeEcho is the task of a connection accepted without an HTTP
// server: UpgradeStream, then the echo.
type upgradeEcho struct {
	uf   *UpgradeFuture
	e    *echoTask
	errc chan<- error
}

func (u *upgradeEcho) Poll(cx *future.Context) (error, bool) {
	if u.e == nil {
		r, ok := u.uf.Poll(cx)
		if !ok {
			return nil, false
		}
		if u.errc != nil {
			u.errc <- r.Err
		}
		if r.Err != nil {
			return nil, true
		}
		u.e = &echoTask{c: r.Value}
	}
	_, ok := u.e.Poll(cx)
	return nil, ok
}

func (u *upgradeEcho) Cancel() {
	if u.e != nil {
		u.e.Cancel()
	} else {
		u.uf.Cancel()
	}
}

// serveStreams serves l's connections with UpgradeStream and the echo,
// until the test ends; the upgrades' errors go to the returned channel.
func serveStreams[S Stream](t *testing.T, rt *blitz.Runtime, l blitz.Acceptor[S], up *Upgrader) <-chan error {
	errc := make(chan error, 16)
	serveStreamsTo(t, rt, l, up, errc)
	return errc
}

// serveStreamsTo is serveStreams reporting each handshake's outcome to
// errc, or to nobody if errc is nil.
func serveStreamsTo[S Stream](t *testing.T, rt *blitz.Runtime, l blitz.Acceptor[S], up *Upgrader, errc chan<- error) {
	ctx, cancel := context.WithCancel(context.Background())
	sf := blitz.Serve(l, func(s S) future.Future[error] {
		return &upgradeEcho{uf: up.UpgradeStream(s, http.Header{"X-Served-By": {"UpgradeStream"}}), errc: errc}
	}, blitz.ServeConfig{Stop: ctx, Grace: -1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = blitz.BlockOn(context.Background(), rt.Handle(), future.Future[blitz.ServeStats](sf))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func newRuntime(t *testing.T) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("runtime Shutdown: %v", err)
		}
	})
	return rt
}

// wss://: our client dials over the runtime's TLS, our server upgrades
// connections of a blitz.TLSListener with UpgradeStream; text, binary,
// compressed, fragmented, and the close handshake.
func TestWSS(t *testing.T) {
	cfg, pool := selfSigned(t)
	rt := newRuntime(t)
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	errc := serveStreams(t, rt, l, &Upgrader{Compression: &CompressionOptions{}, Subprotocols: []string{"chat"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	port := l.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"127.0.0.1", "localhost"} {
		url := "wss://" + net.JoinHostPort(host, itoa(port)) + "/echo?x=1"
		c, resp, err := DialContext(ctx, rt.Handle(), url, &DialOptions{
			TLSConfig: &tls.Config{RootCAs: pool}, Compression: &CompressionOptions{}, Subprotocols: []string{"chat"}})
		if err != nil {
			t.Fatalf("%s: Dial: %v", url, err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("UpgradeStream: %v", err)
		}
		if resp.Header.Get("X-Served-By") != "UpgradeStream" || c.Subprotocol() != "chat" || !strings.HasPrefix(c.Extensions(), "permessage-deflate") {
			t.Fatalf("response %v, subprotocol %q, extensions %q", resp.Header, c.Subprotocol(), c.Extensions())
		}
		for _, n := range []int{0, 1, 200, 70000} {
			p := zPayload(1, n, n)
			echoCheck(t, ctx, c, TextMessage, p, false)
			echoCheck(t, ctx, c, BinaryMessage, p, false)
			echoCheck(t, ctx, c, TextMessage, p, true)
		}
		if err := c.CloseContext(ctx, StatusNormalClosure, "done"); err != nil {
			t.Fatal(err)
		}
	}
}

// A wss:// server whose certificate the client does not trust: the dial
// fails in the TLS handshake.
func TestWSSUntrusted(t *testing.T) {
	cfg, _ := selfSigned(t)
	rt := newRuntime(t)
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	errc := serveStreams(t, rt, l, &Upgrader{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err = DialContext(ctx, rt.Handle(), "wss://"+l.Addr().String()+"/", nil)
	var ue x509.UnknownAuthorityError
	if !errors.As(err, &ue) {
		t.Fatalf("Dial: %v, want an unknown authority", err)
	}
	if err := <-errc; !errors.Is(err, ErrBadHandshake) {
		t.Fatalf("UpgradeStream: %v", err)
	}
}

// UpgradeStream refuses what is not an opening handshake, as Upgrade does,
// and closes the stream.
func TestUpgradeStreamRefusals(t *testing.T) {
	rt := newRuntime(t)
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := serveStreams(t, rt, l, &Upgrader{})
	for _, tc := range []struct {
		req    string
		status int
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusUpgradeRequired},
		{"POST / HTTP/1.1\r\nHost: x\r\n" + goodHeaders + "\r\n", http.StatusMethodNotAllowed},
		{"GET / HTTP/1.1\r\nHost: x\r\nOrigin: http://evil\r\n" + goodHeaders + "\r\n", http.StatusForbidden},
		{"GET / HTTP/1.0\r\nHost: x\r\n" + goodHeaders + "\r\n", http.StatusBadRequest},
		{"not http at all\r\n\r\n", http.StatusBadRequest},
		{"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 20000) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
	} {
		nc, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		go func() { _, _ = io.WriteString(nc, tc.req) }()
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatalf("%.30q: %v", tc.req, err)
		}
		if resp.StatusCode != tc.status {
			t.Fatalf("%.30q: status %d, want %d", tc.req, resp.StatusCode, tc.status)
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			t.Fatalf("%.30q: body: %v", tc.req, err)
		}
		if n, err := nc.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Fatalf("%.30q: stream not closed", tc.req)
		}
		_ = nc.Close()
		if err := <-errc; !errors.Is(err, ErrBadHandshake) {
			t.Fatalf("%.30q: error %v", tc.req, err)
		}
	}
}

// Bad URLs fail the dial with ErrBadURL.
func TestDialBadURL(t *testing.T) {
	rt := newRuntime(t)
	for _, u := range []string{"http://example.com/", "wss://", "ws://[::1", "ftp://x/"} {
		_, _, err := DialContext(context.Background(), rt.Handle(), u, nil)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("%q: %v", u, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// wss:// on httpserver: a Handler of a server on a blitz.TLSListener
// upgrades with Upgrade (HijackConn gives up the TLS stream), and the
// connection echoes as a task.
func TestUpgradeOnHTTPServerTLS(t *testing.T) {
	cfg, pool := selfSigned(t)
	rt := newRuntime(t)
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	up := &Upgrader{Compression: &CompressionOptions{}}
	tasks := make(chan blitz.JoinHandle[struct{}], 4)
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("Upgrade: %v", err)
			return
		}
		tasks <- blitz.SpawnOn[struct{}](rt.Handle(), &echoTask{c: c})
	})}
	errc := make(chan error, 1)
	go func() { errc <- httpserver.ServeAcceptor[*blitz.TLSStream](srv, rt.Handle(), l) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	url := "wss://" + l.Addr().String() + "/ws"
	c, _, err := DialContext(ctx, rt.Handle(), url, &DialOptions{TLSConfig: &tls.Config{RootCAs: pool}, Compression: &CompressionOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 200, 70000} {
		p := zPayload(1, n, n)
		echoCheck(t, ctx, c, TextMessage, p, false)
		echoCheck(t, ctx, c, BinaryMessage, p, true)
	}
	if err := c.CloseContext(ctx, StatusNormalClosure, "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := (<-tasks).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
}
