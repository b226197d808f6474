package blitz_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// hello is a handler that writes "hi" and closes its connection; a failed
// write is its error.
type hello struct {
	s  *blitz.TCPStream
	wr *blitz.WriteAllFuture
}

func (h *hello) Poll(cx *future.Context) (error, bool) {
	if h.wr == nil {
		h.wr = h.s.WriteAll([]byte("hi"))
	}
	r, ok := h.wr.Poll(cx)
	if !ok {
		return nil, false
	}
	_ = h.s.Close()
	return r.Err, true
}

// resetClients dials addr n times from a few goroutines and resets each
// connection at once (SO_LINGER 0, then close), racing the server's
// accepts: a connection may be gone before the accept takes it.
func resetClients(t *testing.T, addr string, n int) {
	t.Helper()
	const dialers = 4
	var wg sync.WaitGroup
	for d := range dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := d; i < n; i += dialers {
				c, err := net.DialTimeout("tcp", addr, 10*time.Second)
				if err != nil {
					t.Errorf("dial %d: %v", i, err)
					return
				}
				_ = c.(*net.TCPConn).SetLinger(0)
				_ = c.Close()
			}
		}()
	}
	wg.Wait()
}

// requireHello dials addr and requires hello's "hi" before the server
// closes the connection.
func requireHello(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(c)
	require.NoError(t, err)
	require.Equal(t, "hi", string(b))
}

// resetRounds is how many clients reset their connection in a test.
func resetRounds() int {
	if testing.Short() {
		return 50
	}
	return 300
}

// Clients that connect and reset at once, many of them, do not stop Serve
// on any backend: a connection reset before its accept is skipped (or
// accepted and its handler fails), and the next connection is served.
func TestServeSurvivesClientsResettingBeforeAccept(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.AddrPort().String()
		// Connections reset while nobody accepts wait in the backlog...
		resetClients(t, addr, 32)
		h := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, func(s *blitz.TCPStream) future.Future[error] { return &hello{s: s} }, blitz.ServeConfig{}))
		// ... and more race the accepts.
		resetClients(t, addr, resetRounds())
		requireHello(t, addr)
		require.NoError(t, l.Close())
		st, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.NoError(t, st.Err, "no reset client stopped the server")
		assert.GreaterOrEqual(t, st.Accepted, 1)
		t.Logf("accepted %d, skipped %d", st.Accepted, rt.Metrics().AcceptsSkipped)
	})
}

// An accept loop of its own sees no error from clients that reset: every
// Accept completes with a connection until the listener closes.
func TestAcceptSurvivesClientsResetting(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.AddrPort().String()
		done := make(chan struct{})
		defer func() { <-done }() // after the listener's close, which ends the client's wait
		defer l.Close()
		go func() {
			defer close(done)
			resetClients(t, addr, resetRounds())
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			_, _ = c.Write([]byte("E"))
			_, _ = c.Read(make([]byte, 1)) // until the server closes it
		}()
		accepted := 0
		for {
			r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](l.Accept()))
			require.NoError(t, err)
			require.NoError(t, r.Err, "accept %d", accepted)
			accepted++
			var b [1]byte // a reset connection reads an error or the end
			rr, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[int]](r.Value.Read(b[:])))
			_ = r.Value.Close()
			require.NoError(t, err)
			if rr.Err == nil && rr.Value == 1 && b[0] == 'E' {
				break
			}
		}
		<-done
		t.Logf("accepted %d, skipped %d", accepted, rt.Metrics().AcceptsSkipped)
	})
}
