package blitz

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
)

// greetOnce is a handler that writes "hi" and closes its connection.
type greetOnce struct {
	s     *TCPStream
	write *WriteAllFuture
	began bool
}

func (g *greetOnce) Poll(cx *future.Context) (error, bool) {
	if !g.began {
		g.write = g.s.WriteAll([]byte("hi"))
		g.began = true
	}
	r, ok := g.write.Poll(cx)
	if !ok {
		return nil, false
	}
	_ = g.s.Close()
	return r.Err, true
}

func (g *greetOnce) Cancel() {
	if g.began {
		g.write.Cancel()
	}
	_ = g.s.Close()
}

// TestServeForgetsFinishedHandlers serves connections one after the other
// and checks that the server's set holds none of the finished handlers: a
// long-running server keeps only the handlers in flight.
func TestServeForgetsFinishedHandlers(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 20
	}
	rt := newServeRuntime(t)
	l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	sf := Serve(l, func(s *TCPStream) future.Future[error] { return &greetOnce{s: s} }, ServeConfig{})
	h := SpawnOn(rt.Handle(), future.Future[ServeStats](sf))
	maxLen := 0
	for i := range n {
		requireGreeting(t, l.AddrPort().String(), i)
		maxLen = max(maxLen, sf.set.len())
	}
	deadline := time.Now().Add(20 * time.Second)
	for sf.set.len() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, 0, sf.set.len(), "every finished handler left the set")
	assert.Less(t, maxLen, n/2, "handlers are reaped while the server runs, not at its end")
	h.Cancel()
	_, err = h.Wait(context.Background())
	assert.ErrorIs(t, err, ErrCancelled)
}

// countingAcceptor counts the AcceptFutures Serve asks its listener for.
type countingAcceptor struct {
	*TCPListener
	calls atomic.Int64
}

func (c *countingAcceptor) Accept() *AcceptFuture[*TCPStream] {
	c.calls.Add(1)
	return c.TCPListener.Accept()
}

// TestServeRearmsItsAccept: Serve asks its listener for one AcceptFuture
// and rearms it after each connection, rather than leaving one (168 bytes)
// as garbage per connection, and every connection is still served.
func TestServeRearmsItsAccept(t *testing.T) {
	n := 50
	if testing.Short() {
		n = 10
	}
	rt := newServeRuntime(t)
	l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	ca := &countingAcceptor{TCPListener: l}
	h := SpawnOn(rt.Handle(), future.Future[ServeStats](Serve[*TCPStream](ca, func(s *TCPStream) future.Future[error] { return &greetOnce{s: s} }, ServeConfig{})))
	for i := range n {
		requireGreeting(t, l.AddrPort().String(), i)
	}
	require.NoError(t, l.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := h.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, n, st.Accepted)
	assert.Equal(t, int64(1), ca.calls.Load(), "one AcceptFuture for every connection")
}

// newServeRuntime starts a runtime of two workers that the test shuts down
// when it ends.
func newServeRuntime(t *testing.T) *Runtime {
	t.Helper()
	rt, err := New(Config{Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, rt.Shutdown(ctx))
	})
	return rt
}

// requireGreeting dials addr, reads until the server closes, and requires
// greetOnce's "hi" (connection i, for the messages).
func requireGreeting(t *testing.T, addr string, i int) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(c)
	c.Close()
	require.NoError(t, err, "connection %d", i)
	require.Equal(t, "hi", string(b), "connection %d", i)
}
