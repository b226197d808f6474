package blitz_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	gort "runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goTLSPeer accepts one connection on a Go listener and hands it to serve
// on a goroutine (raw: the TCP connection, for tests that corrupt or cut
// the TLS stream); the test waits for serve at its end.
func goTLSPeer(t *testing.T, serve func(raw net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		serve(c)
	}()
	t.Cleanup(func() {
		ln.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("the Go peer did not finish")
		}
	})
	return ln.Addr().String()
}

// dialTLS connects a task-side TLS client to addr (its handshake not run).
func dialTLS(t *testing.T, rt *blitz.Runtime, addr string, cfg *tls.Config) *blitz.TLSStream {
	t.Helper()
	tcp := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), addr, 5*time.Second))))
	s := blitz.TLSClient(tcp, cfg)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// awaitErr runs a fallible future on rt and returns its error.
func awaitErr[T any](t *testing.T, rt *blitz.Runtime, f future.Future[future.Result[T]]) (T, error) {
	t.Helper()
	r := await(t, rt, f)
	return r.Value, r.Err
}

// Mutual TLS: a task-side server that requires client certificates sees
// the client's certificate after the handshake and echoes; a client
// without a certificate is refused with crypto/tls's error on both sides.
func TestTLSMutualAuth(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		scfg := pki.serverConfig()
		scfg.ClientAuth = tls.RequireAndVerifyClientCert
		scfg.ClientCAs = pki.pool
		l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", scfg)
		require.NoError(t, err)
		defer l.Close()
		addr := l.Addr().String()

		type outcome struct {
			cn  string
			err error
		}
		accept := func() blitz.JoinHandle[outcome] {
			var s *blitz.TLSStream
			var o outcome
			return blitz.SpawnOn(rt.Handle(), future.Map(tlsChain(
				func() future.Future[error] {
					return future.Map(l.Accept(), func(r future.Result[*blitz.TLSStream]) error { s = r.Value; return r.Err })
				},
				func() future.Future[error] { return tlsErrOf[struct{}](s.Handshake()) },
				tlsDo(func() error {
					st := s.ConnectionState()
					if !st.HandshakeComplete || len(st.PeerCertificates) == 0 {
						return errors.New("no peer certificate after the handshake")
					}
					o.cn = st.PeerCertificates[0].Subject.CommonName
					return nil
				}),
				func() future.Future[error] { return tlsErrOf[int64](blitz.Copy(s, s)) },
				func() future.Future[error] { return tlsErrOf[struct{}](s.CloseWrite()) },
			), func(err error) outcome {
				if s != nil {
					_ = s.Close()
				}
				o.err = err
				return o
			}))
		}

		h := accept()
		ccfg := pki.clientConfig()
		ccfg.Certificates = []tls.Certificate{pki.client}
		p := testPayload(50 << 10)
		sum, n, err := goTLSEchoClient(addr, ccfg, p)
		require.NoError(t, err)
		assert.Equal(t, int64(len(p)), n)
		assert.Equal(t, sha256.Sum256(p), sum)
		o, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		require.NoError(t, o.err)
		assert.Equal(t, "blitz test client", o.cn)

		// Without a client certificate.
		h = accept()
		_, _, err = goTLSEchoClient(addr, pki.clientConfig(), []byte("x"))
		require.Error(t, err, "a client without a certificate got through")
		o, err = h.Wait(testCtx(t))
		require.NoError(t, err)
		require.Error(t, o.err)
		assert.Contains(t, o.err.Error(), "certificate", "the server's error: %v", o.err)
	})
}

// A handshake against a server whose certificate the client's CA did not
// sign fails with crypto/tls's verification error, every later read and
// write fails with it, and the handshake's goroutine ends (goleak checks
// the whole binary; this checks the count right away). The server sees the
// client's alert.
func TestTLSHandshakeWrongCA(t *testing.T) {
	pki, other := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		base := gort.NumGoroutine()
		serverErr := make(chan error, 1)
		addr := goTLSPeer(t, func(raw net.Conn) {
			c := tls.Server(raw, pki.serverConfig())
			serverErr <- c.Handshake()
		})
		s := dialTLS(t, rt, addr, other.clientConfig())
		_, err := awaitErr(t, rt, future.Future[future.Result[struct{}]](s.Handshake()))
		require.Error(t, err)
		var verr *tls.CertificateVerificationError
		require.ErrorAs(t, err, &verr, "%v", err)
		var uerr x509.UnknownAuthorityError
		assert.ErrorAs(t, err, &uerr)
		_, rerr := awaitErr(t, rt, future.Future[future.Result[int]](s.Read(make([]byte, 8))))
		assert.Equal(t, err, rerr, "a read after the failed handshake")
		_, werr := awaitErr(t, rt, future.Future[future.Result[int]](s.Write([]byte("x"))))
		assert.Equal(t, err, werr, "a write after the failed handshake")
		assert.False(t, s.ConnectionState().HandshakeComplete)
		require.NoError(t, s.Close())

		serr := <-serverErr
		require.Error(t, serr)
		assert.Contains(t, serr.Error(), "remote error: tls: bad certificate", "the server reads the client's alert")
		tlsWaitFor(t, func() bool { return gort.NumGoroutine() <= base }, "the handshake goroutine to end")
	})
}

// A task-side server whose client does not trust it: the server's
// handshake fails with the client's alert (tls.AlertError).
func TestTLSServerHandshakeAlert(t *testing.T) {
	pki, other := testCerts(t)
	rt := newRuntime(t, blitz.Config{})
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", pki.serverConfig())
	require.NoError(t, err)
	defer l.Close()
	h := blitz.SpawnOn(rt.Handle(), future.Then(future.Future[future.Result[*blitz.TLSStream]](l.Accept()), func(r future.Result[*blitz.TLSStream]) future.Future[error] {
		if r.Err != nil {
			return future.Ready(r.Err)
		}
		return future.Map(tlsErrOf[struct{}](r.Value.Handshake()), func(err error) error { _ = r.Value.Close(); return err })
	}))
	_, _, cerr := goTLSEchoClient(l.Addr().String(), other.clientConfig(), []byte("x"))
	require.Error(t, cerr)
	serr, err := h.Wait(testCtx(t))
	require.NoError(t, err)
	// crypto/tls's client sends bad_certificate for an unknown CA, and
	// crypto/tls reports a received alert as a *net.OpError "remote error".
	var oe *net.OpError
	require.ErrorAs(t, serr, &oe, "%v", serr)
	assert.Equal(t, "remote error", oe.Op)
	assert.Equal(t, "tls: bad certificate", oe.Err.Error())
}

// The ends of a stream: close_notify reads as io.EOF; a peer that closes
// its socket without close_notify at a record boundary also gives io.EOF
// (crypto/tls accepts that, as for a net.Conn); a peer that closes in the
// middle of a record gives io.ErrUnexpectedEOF.
func TestTLSStreamEnds(t *testing.T) {
	pki, _ := testCerts(t)
	cases := []struct {
		name string
		end  func(c *tls.Conn, raw net.Conn)
		want error
	}{
		{"close_notify", func(c *tls.Conn, raw net.Conn) { _ = c.CloseWrite() }, io.EOF},
		{"no close_notify", func(c *tls.Conn, raw net.Conn) { _ = raw.Close() }, io.EOF},
		{"cut record", func(c *tls.Conn, raw net.Conn) {
			_, _ = raw.Write([]byte{23, 3, 3, 0, 40, 1, 2, 3}) // an application-data record header and 3 of its 40 bytes
			_ = raw.Close()
		}, io.ErrUnexpectedEOF},
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				addr := goTLSPeer(t, func(raw net.Conn) {
					c := tls.Server(raw, pki.serverConfig())
					if c.Handshake() != nil {
						return
					}
					if _, err := c.Write([]byte("hello")); err != nil {
						return
					}
					tc.end(c, raw)
					_, _ = io.Copy(io.Discard, raw) // until the client closes
				})
				s := dialTLS(t, rt, addr, pki.clientConfig())
				got, err := awaitErr(t, rt, future.Future[future.Result[[]byte]](blitz.ReadToEnd(s)))
				assert.Equal(t, "hello", string(got))
				if tc.want == io.EOF {
					require.NoError(t, err) // ReadToEnd's end is io.EOF exactly
				} else {
					require.ErrorIs(t, err, tc.want)
				}
				// The end is sticky.
				_, err2 := awaitErr(t, rt, future.Future[future.Result[int]](s.Read(make([]byte, 4))))
				assert.ErrorIs(t, err2, tc.want)
			})
		}
	})
}

// CloseWrite sends close_notify: the Go peer reads the data then io.EOF,
// writes after it fail, and the stream still reads what the peer sends.
func TestTLSCloseWrite(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		peerRead := make(chan []byte, 1)
		addr := goTLSPeer(t, func(raw net.Conn) {
			c := tls.Server(raw, pki.serverConfig())
			b, err := io.ReadAll(c) // ends with close_notify: ReadAll's nil error is io.EOF
			if err != nil {
				b = append(b, []byte(" ERR "+err.Error())...)
			}
			peerRead <- b
			_, _ = c.Write([]byte("after"))
			_ = c.CloseWrite()
		})
		s := dialTLS(t, rt, addr, pki.clientConfig())
		_, err := awaitErr(t, rt, future.Future[future.Result[int]](s.WriteAll([]byte("data"))))
		require.NoError(t, err)
		_, err = awaitErr(t, rt, future.Future[future.Result[struct{}]](s.CloseWrite()))
		require.NoError(t, err)
		assert.Equal(t, "data", string(<-peerRead))
		_, err = awaitErr(t, rt, future.Future[future.Result[int]](s.Write([]byte("late"))))
		assert.Error(t, err, "a write after CloseWrite")
		got, err := awaitErr(t, rt, future.Future[future.Result[[]byte]](blitz.ReadToEnd(s)))
		require.NoError(t, err)
		assert.Equal(t, "after", string(got))
	})
}

// Reads cancelled at arbitrary points (by a short Timeout, in the middle of
// records too) lose nothing: the bytes read by the reads that completed
// are exactly what the peer sent.
func TestTLSCancelledReadsLoseNothing(t *testing.T) {
	pki, _ := testCerts(t)
	size := 256 << 10
	if testing.Short() {
		size = 64 << 10
	}
	payload := testPayload(size)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		addr := goTLSPeer(t, func(raw net.Conn) {
			c := tls.Server(dribbleConn{raw}, pki.serverConfig())
			// Dribble: records of odd sizes, each written to the socket in
			// small pieces with pauses, so that reads are cancelled in the
			// middle of records.
			for off := 0; off < len(payload); {
				n := min(len(payload)-off, 1+off%7919)
				if _, err := c.Write(payload[off : off+n]); err != nil {
					return
				}
				off += n
				if off%5 == 0 {
					time.Sleep(100 * time.Microsecond)
				}
			}
			_ = c.CloseWrite()
		})
		s := dialTLS(t, rt, addr, pki.clientConfig())
		_, err := awaitErr(t, rt, future.Future[future.Result[struct{}]](s.Handshake()))
		require.NoError(t, err)
		var got bytes.Buffer
		buf := make([]byte, 3000)
		cancelled := 0
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			r := await(t, rt, blitz.Timeout(time.Duration(20+cancelled%200)*time.Microsecond, future.Future[future.Result[int]](s.Read(buf))))
			if errors.Is(r.Err, blitz.ErrTimeout) {
				cancelled++
				continue
			}
			if r.Value.Err == io.EOF {
				break
			}
			require.NoError(t, r.Value.Err)
			got.Write(buf[:r.Value.Value])
		}
		t.Logf("%d reads cancelled", cancelled)
		require.Equal(t, len(payload), got.Len())
		require.Equal(t, sha256.Sum256(payload), sha256.Sum256(got.Bytes()))
	})
}

// SetReadTimeout bounds a read with the transport's timeout error
// (os.ErrDeadlineExceeded); the stream stays usable and the next read gets
// the data.
func TestTLSReadTimeout(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		send := make(chan struct{})
		addr := goTLSPeer(t, func(raw net.Conn) {
			c := tls.Server(raw, pki.serverConfig())
			if c.Handshake() != nil {
				return
			}
			<-send
			_, _ = c.Write([]byte("late"))
			_ = c.CloseWrite()
		})
		s := dialTLS(t, rt, addr, pki.clientConfig())
		_, err := awaitErr(t, rt, future.Future[future.Result[struct{}]](s.Handshake()))
		require.NoError(t, err)
		s.SetReadTimeout(30 * time.Millisecond)
		_, err = awaitErr(t, rt, future.Future[future.Result[int]](s.Read(make([]byte, 8))))
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		require.ErrorIs(t, err, blitz.ErrTimeout)
		s.SetReadTimeout(0)
		close(send)
		got, err := awaitErr(t, rt, future.Future[future.Result[[]byte]](blitz.ReadToEnd(s)))
		require.NoError(t, err)
		assert.Equal(t, "late", string(got))
	})
}

// A handshake whose future is cancelled (a Timeout against a server that
// never answers) fails the stream with ErrTLSHandshakeCancelled, and its
// goroutine ends; closing the stream during a handshake fails it with
// net.ErrClosed.
func TestTLSHandshakeCancelAndClose(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		base := gort.NumGoroutine()
		silent := func() string {
			return goTLSPeer(t, func(raw net.Conn) { _, _ = io.Copy(io.Discard, raw) })
		}

		s := dialTLS(t, rt, silent(), pki.clientConfig())
		r := await(t, rt, blitz.Timeout(30*time.Millisecond, future.Future[future.Result[struct{}]](s.Handshake())))
		require.ErrorIs(t, r.Err, blitz.ErrTimeout)
		_, err := awaitErr(t, rt, future.Future[future.Result[int]](s.Read(make([]byte, 4))))
		require.ErrorIs(t, err, blitz.ErrTLSHandshakeCancelled)
		_, err = awaitErr(t, rt, future.Future[future.Result[struct{}]](s.Handshake()))
		require.ErrorIs(t, err, blitz.ErrTLSHandshakeCancelled)
		require.NoError(t, s.Close())

		s = dialTLS(t, rt, silent(), pki.clientConfig())
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](s.Read(make([]byte, 4))))
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, s.Close())
		res, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		require.ErrorIs(t, res.Err, net.ErrClosed)
		tlsWaitFor(t, func() bool { return gort.NumGoroutine() <= base+2 }, "the handshake goroutines to end") // the two silent peers may linger until cleanup
	})
}

// dribbleConn writes to its connection in pieces of 300 bytes with a
// pause after each.
type dribbleConn struct{ net.Conn }

func (d dribbleConn) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 300)
		m, err := d.Conn.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
		time.Sleep(20 * time.Microsecond)
	}
	return n, nil
}
