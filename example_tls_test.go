package blitz_test

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
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// shouter serves one TLS connection as a task: the handshake, then one
// message read and answered in upper case, then close_notify. The futures
// it waits on are its fields.
type shouter struct {
	s    *blitz.TLSStream
	buf  [64]byte
	step int
	hs   *blitz.TLSHandshakeFuture
	rw   *blitz.StreamFuture[int]
	end  *blitz.StreamFuture[struct{}]
}

func (h *shouter) Poll(cx *future.Context) (error, bool) {
	for {
		switch h.step {
		case 0:
			h.hs, h.step = h.s.Handshake(), 1
		case 1:
			r, ok := h.hs.Poll(cx)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return h.finish(r.Err)
			}
			h.rw, h.step = h.s.Read(h.buf[:]), 2
		case 2:
			r, ok := h.rw.Poll(cx) // no goroutine waits here: the task holds an async read
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return h.finish(r.Err)
			}
			h.rw, h.step = h.s.WriteAll([]byte(strings.ToUpper(string(h.buf[:r.Value])))), 3
		case 3:
			r, ok := h.rw.Poll(cx)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return h.finish(r.Err)
			}
			h.end, h.step = h.s.CloseWrite(), 4
		case 4:
			r, ok := h.end.Poll(cx)
			if !ok {
				return nil, false
			}
			return h.finish(r.Err)
		}
	}
}

func (h *shouter) finish(err error) (error, bool) {
	_ = h.s.Close()
	return err, true
}

// Example_tlsServer serves TLS from tasks: a TLSListener's connections are
// handled by Serve, one task each, and the handshake runs in that task.
// The client is ordinary Go code using crypto/tls.
func Example_tlsServer() {
	cert, roots := exampleCertificate()
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		panic(err)
	}
	addr := l.Addr().String()
	server := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, func(s *blitz.TLSStream) future.Future[error] {
		return &shouter{s: s}
	}, blitz.ServeConfig{}))

	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "localhost"})
	if err != nil {
		panic(err)
	}
	_, _ = c.Write([]byte("hello over tls"))
	reply, err := io.ReadAll(c) // until the server's close_notify
	fmt.Println(string(reply), err)
	fmt.Println(tls.VersionName(c.ConnectionState().Version))
	c.Close()

	_ = l.Close()
	stats, _ := server.Wait(context.Background())
	fmt.Println("handled:", stats.Completed, "failed:", stats.Failed)
	// Output:
	// HELLO OVER TLS <nil>
	// TLS 1.3
	// handled: 1 failed: 0
}

// exampleCertificate makes a self-signed certificate for localhost and the
// pool that trusts it.
func exampleCertificate() (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots
}
