package blitz_test

import (
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveTLSEcho serves tlsEchoHandler on a TLSListener of rt until the test
// ends, and returns its address.
func serveTLSEcho(t *testing.T, rt *blitz.Runtime, cfg *tls.Config) string {
	t.Helper()
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	stop := make(chan struct{})
	h := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, tlsEchoHandler, blitz.ServeConfig{}))
	t.Cleanup(func() {
		close(stop)
		_ = l.Close()
		st, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.NoError(t, st.HandlerErr, "a handler failed")
	})
	return l.Addr().String()
}

// A task-side TLS server (TLSListener, Serve) echoes small and large
// payloads to crypto/tls clients on goroutines, several at once; the
// hashes of what each client sent and read back match.
func TestTLSServerEchoesGoClients(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		addr := serveTLSEcho(t, rt, pki.serverConfig())
		sizes := []int{1, 100, 16 << 10, 100 << 10, 8 << 20}
		clients := 8
		if tlsLight() {
			clients = 4
		}
		if !tlsHeavyBackend(cfg) {
			sizes[len(sizes)-1] = 1 << 20
		}
		errs := make(chan error, clients*len(sizes))
		for c := 0; c < clients; c++ {
			go func() {
				for i, n := range sizes {
					if i == len(sizes)-1 && c > 0 {
						n = 256 << 10 // one 8 MiB client; the others send less
					}
					p := testPayload(n)
					sum, got, err := goTLSEchoClient(addr, pki.clientConfig(), p)
					switch {
					case err != nil:
						errs <- fmt.Errorf("client %d, %d bytes: %w", c, n, err)
					case got != int64(n) || sum != sha256.Sum256(p):
						errs <- fmt.Errorf("client %d: sent %d bytes, read back %d, hashes match: %v", c, n, got, sum == sha256.Sum256(p))
					default:
						errs <- nil
					}
				}
			}()
		}
		for i := 0; i < clients*len(sizes); i++ {
			select {
			case err := <-errs:
				require.NoError(t, err)
			case <-testCtx(t).Done():
				t.Fatal("the echo clients did not finish")
			}
		}
	})
}

// tlsClientEcho is a task-side TLS client: dial addr, handshake, write
// payload (and close_notify) while reading everything back until the
// server's close_notify; it returns what it read.
func tlsClientEcho(h blitz.Handle, addr string, cfg *tls.Config, payload []byte) future.Future[future.Result[[]byte]] {
	var got future.Result[[]byte]
	var s *blitz.TLSStream
	return future.Map(tlsChain(
		func() future.Future[error] {
			return future.Map(blitz.DialTCP(h, addr, 5*time.Second), func(r future.Result[*blitz.TCPStream]) error {
				if r.Err == nil {
					s = blitz.TLSClient(r.Value, cfg)
				}
				return r.Err
			})
		},
		func() future.Future[error] {
			return future.Map(tlsEchoOver(s, payload, true), func(r future.Result[[]byte]) error { got = r; return nil })
		},
	), func(err error) future.Result[[]byte] {
		if err != nil {
			return future.Result[[]byte]{Err: err}
		}
		return got
	})
}

// tlsEchoOver runs the client side of an echo on s: handshake (unless
// implicit, when the first write and read run it at once), write payload
// and close_notify while reading everything back until the peer's
// close_notify, close s; it returns what it read.
func tlsEchoOver(s *blitz.TLSStream, payload []byte, handshake bool) future.Future[future.Result[[]byte]] {
	var got []byte
	return future.Map(tlsChain(
		func() future.Future[error] {
			if !handshake {
				return future.Ready[error](nil)
			}
			return tlsErrOf[struct{}](s.Handshake())
		},
		func() future.Future[error] {
			w := tlsChain(
				func() future.Future[error] { return tlsErrOf[int](s.WriteAll(payload)) },
				func() future.Future[error] { return tlsErrOf[struct{}](s.CloseWrite()) },
			)
			r := future.Map(blitz.ReadToEnd(s), func(r future.Result[[]byte]) error { got = r.Value; return r.Err })
			return future.Map(future.Join2(w, r), func(p future.Pair[error, error]) error {
				if p.First != nil {
					return p.First
				}
				return p.Second
			})
		},
	), func(err error) future.Result[[]byte] {
		_ = s.Close()
		return future.Result[[]byte]{Value: got, Err: err}
	})
}

// A task-side TLS client echoes small and large payloads through a
// crypto/tls server on Go's net, several connections at once.
func TestTLSClientAgainstGoServer(t *testing.T) {
	pki, _ := testCerts(t)
	addr := goTLSEchoServer(t, pki.serverConfig())
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		sizes := []int{1, 1000, 8 << 20}
		if !tlsHeavyBackend(cfg) {
			sizes[len(sizes)-1] = 1 << 20
		}
		for _, n := range sizes {
			p := testPayload(n)
			conns := 6
			if n > 1<<20 {
				conns = 1
			}
			hs := make([]blitz.JoinHandle[future.Result[[]byte]], conns)
			for i := range hs {
				hs[i] = blitz.SpawnOn(rt.Handle(), tlsClientEcho(rt.Handle(), addr, pki.clientConfig(), p))
			}
			for _, h := range hs {
				r, err := h.Wait(testCtx(t))
				require.NoError(t, err)
				require.NoError(t, r.Err)
				require.Equal(t, n, len(r.Value))
				require.Equal(t, sha256.Sum256(p), sha256.Sum256(r.Value))
			}
		}
	})
}

// Both ends tasks of one runtime, over TLS 1.2 and TLS 1.3: the client's
// first write and read run the handshake together (no Handshake call), and
// each side sees the negotiated version.
func TestTLSTaskToTask(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(tls.VersionName(v), func(t *testing.T) {
				scfg := pki.serverConfig()
				scfg.MaxVersion = v
				l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", scfg)
				require.NoError(t, err)
				var serverVersion uint16
				server := blitz.SpawnOn(rt.Handle(), future.Then(future.Future[future.Result[*blitz.TLSStream]](l.Accept()), func(r future.Result[*blitz.TLSStream]) future.Future[error] {
					if r.Err != nil {
						return future.Ready(r.Err)
					}
					s := r.Value
					return tlsChain(
						func() future.Future[error] { return tlsErrOf[struct{}](s.Handshake()) },
						tlsDo(func() error { serverVersion = s.ConnectionState().Version; return nil }),
						func() future.Future[error] { return tlsEchoHandler(s) },
					)
				}))
				tcp := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), l.Addr().String(), 5*time.Second))))
				c := blitz.TLSClient(tcp, pki.clientConfig())
				p := testPayload(300 << 10)
				var clientVersion uint16
				got := ok(t, await(t, rt, future.Map(tlsEchoOver(c, p, false), func(r future.Result[[]byte]) future.Result[[]byte] {
					clientVersion = c.ConnectionState().Version
					return r
				})))
				assert.Equal(t, sha256.Sum256(p), sha256.Sum256(got))
				herr, err := server.Wait(testCtx(t))
				require.NoError(t, err)
				require.NoError(t, herr)
				require.NoError(t, l.Close())
				assert.Equal(t, v, clientVersion)
				assert.Equal(t, v, serverVersion)
			})
		}
	})
}

// One task writes and another reads the same TLSStream at once, both
// starting before the handshake (one drives it, the other waits for it),
// while the server echoes: the reader gets everything the writer sent.
func TestTLSReaderAndWriterTasks(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		addr := serveTLSEcho(t, rt, pki.serverConfig())
		tcp := ok(t, await(t, rt, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), addr, 5*time.Second))))
		c := blitz.TLSClient(tcp, pki.clientConfig())
		defer c.Close()
		p := testPayload(2 << 20)
		if tlsLight() {
			p = p[:512<<10]
		}
		writer := blitz.SpawnOn(rt.Handle(), tlsChain(
			func() future.Future[error] { return tlsErrOf[int](c.WriteAll(p)) },
			func() future.Future[error] { return tlsErrOf[struct{}](c.CloseWrite()) },
		))
		reader := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[[]byte]](blitz.ReadToEnd(c)))
		werr, err := writer.Wait(testCtx(t))
		require.NoError(t, err)
		require.NoError(t, werr)
		got, err := reader.Wait(testCtx(t))
		require.NoError(t, err)
		require.NoError(t, got.Err)
		assert.Equal(t, sha256.Sum256(p), sha256.Sum256(got.Value))
		assert.True(t, c.ConnectionState().HandshakeComplete)
	})
}
