package blitz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/iodriver"
)

// Each failure of an accept that belongs to its connection is recognised
// however it is wrapped (a backend's *Error, the runtime's *net.OpError,
// an fmt.Errorf %w around either); the listener's own failures are not.
func TestConnLevelAcceptError(t *testing.T) {
	wraps := []struct {
		name string
		wrap func(error) error
	}{
		{"bare", func(e error) error { return e }},
		{"backend.Error", func(e error) error { return backend.NewError("accept", e, nil) }},
		{"net.OpError", func(e error) error {
			return &net.OpError{Op: "accept", Net: "tcp", Err: backend.NewError("accept", e, nil)}
		}},
		{"fmt.Errorf", func(e error) error { return fmt.Errorf("serve: %w", backend.NewError("accept", e, nil)) }},
		{"fmt.Errorf(net.OpError)", func(e error) error {
			return fmt.Errorf("serve: %w", &net.OpError{Op: "accept", Net: "tcp", Err: fmt.Errorf("x: %w", e)})
		}},
	}
	connLevel := []error{backend.ErrConnAborted, backend.ErrConnReset, backend.ErrNotConnected, backend.ErrTimedOut, backend.ErrBrokenPipe}
	listenerLevel := []error{
		ErrClosed, net.ErrClosed, errRuntimeDown, backend.ErrClosed, backend.ErrCanceled,
		backend.ErrTooManyFiles, backend.ErrNoMemory, backend.ErrPermission, backend.ErrInvalid,
		backend.ErrUnsupported, backend.ErrConnRefused, backend.ErrUnreachable, backend.ErrIO,
		errors.New("something else"),
	}
	for _, w := range wraps {
		for _, e := range connLevel {
			assert.True(t, connLevelAcceptError(w.wrap(e)), "%s: %v", w.name, w.wrap(e))
		}
		for _, e := range listenerLevel {
			assert.False(t, connLevelAcceptError(w.wrap(e)), "%s: %v", w.name, w.wrap(e))
		}
	}
	assert.False(t, connLevelAcceptError(nil))
}

// acceptFaults turns the next successful accepts of a runtime's backends
// into failures, one per error in errs, in order: the accepted socket is
// closed and the completion carries the error instead, as the kernel
// reports a connection the client reset or aborted before the accept took
// it. Any ring's Wait may take one.
type acceptFaults struct {
	mu       sync.Mutex
	errs     []error
	injected int
}

// next pops the error for the next accept, or returns nil when none is left.
func (f *acceptFaults) next() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) == 0 {
		return nil
	}
	e := f.errs[0]
	f.errs = f.errs[1:]
	f.injected++
	return e
}

// count returns how many faults were injected.
func (f *acceptFaults) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// faultyBackend is a backend whose accept completions acceptFaults alters.
type faultyBackend struct {
	backend.Backend
	f *acceptFaults
}

func (b *faultyBackend) Wait(out []backend.Completion, timeout time.Duration) (int, error) {
	n, err := b.Backend.Wait(out, timeout)
	for i := range out[:n] {
		c := &out[i]
		if c.Op == nil || c.Op.Kind != backend.KindAccept || c.Err != nil || c.More() || c.FD == backend.InvalidFD {
			continue
		}
		e := b.f.next()
		if e == nil {
			continue
		}
		_ = b.Backend.CloseFD(c.FD)
		c.FD, c.Addr, c.Err = backend.InvalidFD, backend.Addr{}, backend.NewError("accept", e, nil)
	}
	return n, err
}

// newFaultyRuntime starts a runtime of two workers on backend bk whose
// next accepts fail with errs, shut down when the test ends. The test must
// not run in parallel (it sets iodriver.TestHookBackend around New).
func newFaultyRuntime(t *testing.T, bk string, errs ...error) (*Runtime, *acceptFaults) {
	t.Helper()
	f := &acceptFaults{errs: errs}
	iodriver.TestHookBackend = func(b backend.Backend) backend.Backend { return &faultyBackend{Backend: b, f: f} }
	rt, err := New(Config{Workers: 2, Backend: bk})
	iodriver.TestHookBackend = nil
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, rt.Shutdown(ctx))
	})
	return rt, f
}

// dialToEnd dials addr and reads until the server closes or resets the
// connection; it returns what it read.
func dialToEnd(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	b, _ := io.ReadAll(c) // a skipped connection ends in EOF or a reset
	return string(b)
}

// Every connection-level failure of an accept is skipped: Serve goes on,
// serves the next connection, and Metrics counts the skipped ones; on every
// backend of the platform.
func TestServeSkipsConnLevelAcceptFailures(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, faults := newFaultyRuntime(t, bk, connLevelAccepts[:]...)
			l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
			require.NoError(t, err)
			addr := l.AddrPort().String()
			h := SpawnOn(rt.Handle(), future.Future[ServeStats](Serve(l, func(s *TCPStream) future.Future[error] { return &greetOnce{s: s} }, ServeConfig{})))
			for i := range connLevelAccepts {
				// One at a time, so that fault i is this connection's.
				assert.Empty(t, dialToEnd(t, addr), "connection %d was skipped", i)
			}
			require.Equal(t, len(connLevelAccepts), faults.count())
			requireGreeting(t, addr, len(connLevelAccepts))
			m := rt.Metrics()
			assert.Equal(t, uint64(len(connLevelAccepts)), m.AcceptsSkipped)
			var prom strings.Builder
			require.NoError(t, m.WritePrometheus(&prom))
			assert.Contains(t, prom.String(), fmt.Sprintf("\nblitz_accepts_skipped_total %d\n", len(connLevelAccepts)))
			require.NoError(t, l.Close())
			st, err := h.Wait(testContext(t))
			require.NoError(t, err)
			assert.NoError(t, st.Err, "a skipped connection is no error of Serve")
			assert.Equal(t, 1, st.Accepted)
		})
	}
}

// An AcceptFuture completes with the next connection after skipped ones,
// not with their errors.
func TestAcceptSkipsConnLevelFailures(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, faults := newFaultyRuntime(t, bk, connLevelAccepts[:]...)
			l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
			require.NoError(t, err)
			defer l.Close()
			n := len(connLevelAccepts) + 1
			clients := make([]net.Conn, n)
			for i := range clients {
				c, err := net.DialTimeout("tcp", l.AddrPort().String(), 10*time.Second)
				require.NoError(t, err)
				defer c.Close()
				_, err = c.Write([]byte{byte(i)})
				require.NoError(t, err)
				clients[i] = c
			}
			r, err := BlockOn(testContext(t), rt.Handle(), future.Future[future.Result[*TCPStream]](l.Accept()))
			require.NoError(t, err)
			require.NoError(t, r.Err, "the accept skipped the failed connections")
			defer r.Value.Close()
			var b [1]byte
			rr, err := BlockOn(testContext(t), rt.Handle(), future.Future[future.Result[int]](r.Value.Read(b[:])))
			require.NoError(t, err)
			require.NoError(t, rr.Err)
			assert.Equal(t, 1, rr.Value, "the accepted connection works")
			assert.Equal(t, len(connLevelAccepts), faults.count())
			assert.Equal(t, uint64(len(connLevelAccepts)), rt.Metrics().AcceptsSkipped)
		})
	}
}

// The listener's own failures still surface: a permission refused fails
// the accept (and stops Serve), running out of descriptors backs off
// (Backoffs) rather than skipping, and a closed listener fails with
// ErrClosed, which matches net.ErrClosed. None is counted as skipped.
func TestAcceptListenerErrorsSurface(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			t.Run("permission", func(t *testing.T) {
				rt, _ := newFaultyRuntime(t, bk, backend.ErrPermission)
				l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
				require.NoError(t, err)
				h := SpawnOn(rt.Handle(), future.Future[ServeStats](Serve(l, func(s *TCPStream) future.Future[error] { return &greetOnce{s: s} }, ServeConfig{})))
				dialToEnd(t, l.AddrPort().String())
				st, err := h.Wait(testContext(t))
				require.NoError(t, err)
				require.ErrorIs(t, st.Err, backend.ErrPermission, "Serve stopped on the listener's error")
				var oe *net.OpError
				require.ErrorAs(t, st.Err, &oe)
				assert.Equal(t, "accept", oe.Op)
				assert.Equal(t, 0, st.Accepted)
				assert.Zero(t, rt.Metrics().AcceptsSkipped)
			})
			t.Run("EMFILE", func(t *testing.T) {
				rt, faults := newFaultyRuntime(t, bk, backend.ErrTooManyFiles)
				l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
				require.NoError(t, err)
				defer l.Close()
				for range 2 {
					c, err := net.DialTimeout("tcp", l.AddrPort().String(), 10*time.Second)
					require.NoError(t, err)
					defer c.Close()
				}
				r, err := BlockOn(testContext(t), rt.Handle(), future.Future[future.Result[*TCPStream]](l.Accept()))
				require.NoError(t, err)
				require.NoError(t, r.Err, "out of descriptors, the accept backs off and retries")
				_ = r.Value.Close()
				assert.Equal(t, 1, faults.count())
				assert.Equal(t, uint64(1), l.Backoffs())
				assert.Zero(t, rt.Metrics().AcceptsSkipped)
			})
			t.Run("closed", func(t *testing.T) {
				rt, _ := newFaultyRuntime(t, bk)
				l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
				require.NoError(t, err)
				require.NoError(t, l.Close())
				r, err := BlockOn(testContext(t), rt.Handle(), future.Future[future.Result[*TCPStream]](l.Accept()))
				require.NoError(t, err)
				require.ErrorIs(t, r.Err, net.ErrClosed)
				assert.False(t, connLevelAcceptError(r.Err))
				assert.Zero(t, rt.Metrics().AcceptsSkipped)
			})
		})
	}
}

// testContext bounds a wait of the test.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
