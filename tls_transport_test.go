package blitz_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TLS over Unix stream sockets: a TLSListener over a UnixListener serves
// echo to a task-side client over DialUnix.
func TestTLSOverUnix(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		dir, err := os.MkdirTemp("", "blitz-tls")
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "s")
		ul, err := blitz.ListenUnix(rt.Handle(), path)
		if errors.Is(err, backend.ErrUnsupported) {
			t.Skip("no Unix sockets here:", err)
		}
		require.NoError(t, err)
		l := blitz.NewTLSListener(ul, pki.serverConfig())
		server := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, tlsEchoHandler, blitz.ServeConfig{}))

		u := ok(t, await(t, rt, future.Future[future.Result[*blitz.UnixStream]](blitz.DialUnix(rt.Handle(), path))))
		s := blitz.TLSClient(u, pki.clientConfig())
		p := testPayload(1 << 20)
		got := ok(t, await(t, rt, tlsEchoOver(s, p, false)))
		assert.Equal(t, sha256.Sum256(p), sha256.Sum256(got))

		require.NoError(t, l.Close())
		st, err := server.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, 1, st.Accepted)
		assert.NoError(t, st.HandlerErr)
	})
}

// plainTransport hides everything of a stream but TLSTransport's methods
// (no pooled reads, no write futures, no addresses, no timeouts), so that
// the TLSStream reads into a buffer of its own and writes with PollWrite.
type plainTransport struct{ blitz.TLSTransport }

// TLS over a transport with only the AsyncReader, AsyncWriter and Closer
// methods: a task-side client and a task-side server over such transports
// (on TCP) echo to each other and to Go.
func TestTLSOverPlainTransport(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p := testPayload(1 << 20)

		// Client: against crypto/tls on Go's net.
		addr := goTLSEchoServer(t, pki.serverConfig())
		tcp := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), addr, 5*time.Second))))
		s := blitz.TLSClient(plainTransport{tcp}, pki.clientConfig())
		assert.Equal(t, "tls", s.LocalAddr().Network())
		got := ok(t, await(t, rt, tlsEchoOver(s, p, false)))
		assert.Equal(t, sha256.Sum256(p), sha256.Sum256(got))

		// Server: a crypto/tls client on a goroutine.
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		h := blitz.SpawnOn(rt.Handle(), future.Then(future.Future[future.Result[*blitz.TCPStream]](l.Accept()), func(r future.Result[*blitz.TCPStream]) future.Future[error] {
			if r.Err != nil {
				return future.Ready(r.Err)
			}
			return tlsEchoHandler(blitz.TLSServer(plainTransport{r.Value}, pki.serverConfig()))
		}))
		sum, n, err := goTLSEchoClient(l.Addr().String(), pki.clientConfig(), p)
		require.NoError(t, err)
		assert.Equal(t, int64(len(p)), n)
		assert.Equal(t, sha256.Sum256(p), sum)
		herr, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		require.NoError(t, herr)
	})
}

// A write cancelled while the peer does not read (a Timeout around a
// WriteAll that fills the socket's buffers) leaves the stream usable: its
// encrypted bytes are sent before the next write's, so the peer reads a
// prefix of the payload then the next write, with no TLS error.
func TestTLSCancelledWriteKeepsStreamUsable(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		start := make(chan struct{})
		read := make(chan []byte, 1)
		addr := goTLSPeer(t, func(raw net.Conn) {
			c := tls.Server(raw, pki.serverConfig())
			if c.Handshake() != nil {
				read <- nil
				return
			}
			<-start
			b, err := io.ReadAll(c)
			if err != nil {
				b = append(b, []byte("ERR "+err.Error())...)
			}
			read <- b
		})
		s := dialTLS(t, rt, addr, pki.clientConfig())
		_, err := awaitErr(t, rt, future.Future[future.Result[struct{}]](s.Handshake()))
		require.NoError(t, err)
		p := testPayload(16 << 20) // more than the socket buffers take
		r := await(t, rt, blitz.Timeout(50*time.Millisecond, future.Future[future.Result[int]](s.WriteAll(p))))
		require.ErrorIs(t, r.Err, blitz.ErrTimeout, "the write was not cancelled: the peer took %d bytes", r.Value.Value)
		close(start)
		tail := []byte("--TAIL--")
		_, err = awaitErr(t, rt, future.Future[future.Result[int]](s.WriteAll(tail)))
		require.NoError(t, err)
		_, err = awaitErr(t, rt, future.Future[future.Result[struct{}]](s.CloseWrite()))
		require.NoError(t, err)
		got := <-read
		require.True(t, bytes.HasSuffix(got, tail), "the peer's read ends with %q", got[max(0, len(got)-64):])
		prefix := got[:len(got)-len(tail)]
		require.Greater(t, len(prefix), 0)
		require.True(t, bytes.Equal(prefix, p[:len(prefix)]), "the peer read %d bytes that are not the payload's prefix", len(prefix))
		t.Logf("the peer read %d bytes of the cancelled write, then the next write", len(prefix))
	})
}

// DialTLS connects and runs the handshake, taking the server name from the
// address; a failed handshake is its error (and closes the connection), a
// refused connection too.
func TestTLSDial(t *testing.T) {
	pki, other := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		addr := goTLSEchoServer(t, pki.serverConfig())
		ccfg := pki.clientConfig()
		ccfg.ServerName = "" // crypto/tls refuses a client without one: DialTLS takes "127.0.0.1" from addr
		s := ok(t, await(t, rt, future.Future[future.Result[*blitz.TLSStream]](blitz.DialTLS(rt.Handle(), addr, ccfg, 5*time.Second))))
		st := s.ConnectionState()
		assert.True(t, st.HandshakeComplete)
		assert.NotEmpty(t, st.VerifiedChains)
		assert.Equal(t, "", ccfg.ServerName, "DialTLS modified the caller's config")
		got := ok(t, await(t, rt, tlsEchoOver(s, []byte("dialled"), false)))
		assert.Equal(t, "dialled", string(got))

		_, err := awaitErr(t, rt, future.Future[future.Result[*blitz.TLSStream]](blitz.DialTLS(rt.Handle(), addr, other.clientConfig(), 5*time.Second)))
		var verr *tls.CertificateVerificationError
		assert.ErrorAs(t, err, &verr)

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		refused := ln.Addr().String()
		ln.Close()
		_, err = awaitErr(t, rt, future.Future[future.Result[*blitz.TLSStream]](blitz.DialTLS(rt.Handle(), refused, pki.clientConfig(), 5*time.Second)))
		assert.ErrorIs(t, err, backend.ErrConnRefused)
	})
}
