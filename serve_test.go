package blitz_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// serveProbe counts what the test handlers did.
type serveProbe struct {
	requests  atomic.Int32 // requests read
	cancelled atomic.Int32 // handlers whose Cancel ran
	// release is what "slow" requests wait for.
	release *blitz.Coordinator
}

// lineHandler reads one line and answers "done:<line>" after a wait that
// depends on the line: "quick" none, "slow" the probe's release, "stuck"
// forever; "fail" returns an error without answering.
type lineHandler struct {
	p     *serveProbe
	s     *blitz.TCPStream
	buf   [64]byte
	n     int
	step  int
	read  *blitz.ReadFuture
	wait  future.Future[struct{}]
	write *blitz.WriteAllFuture
}

func newLineHandler(p *serveProbe) func(*blitz.TCPStream) future.Future[error] {
	return func(s *blitz.TCPStream) future.Future[error] { return &lineHandler{p: p, s: s} }
}

func (h *lineHandler) Poll(cx *future.Context) (error, bool) {
	for {
		switch h.step {
		case 0:
			h.read = h.s.Read(h.buf[h.n:])
			h.step = 1
		case 1:
			r, ok := h.read.Poll(cx)
			if !ok {
				return nil, false
			}
			if r.Err != nil || r.Value == 0 {
				_ = h.s.Close()
				return fmt.Errorf("read: %v (n=%d)", r.Err, r.Value), true
			}
			h.n += r.Value
			if !bytes.Contains(h.buf[:h.n], []byte("\n")) {
				h.step = 0
				continue
			}
			h.p.requests.Add(1)
			switch req := h.line(); req {
			case "quick":
				h.wait = future.Ready(struct{}{})
			case "slow":
				w := h.p.release.WhenTriggered()
				h.wait = w
			case "stuck":
				h.wait = future.Pending[struct{}]()
			case "fail":
				_ = h.s.Close()
				return errors.New("failed on purpose"), true
			default:
				panic("unexpected request " + req)
			}
			h.step = 2
		case 2:
			if _, ok := h.wait.Poll(cx); !ok {
				return nil, false
			}
			h.wait = nil
			h.write = h.s.WriteAll([]byte("done:" + h.line()))
			h.step = 3
		case 3:
			r, ok := h.write.Poll(cx)
			if !ok {
				return nil, false
			}
			_ = h.s.Close()
			return r.Err, true
		}
	}
}

func (h *lineHandler) line() string {
	return string(bytes.TrimSpace(h.buf[:bytes.IndexByte(h.buf[:h.n], '\n')]))
}

func (h *lineHandler) Cancel() {
	switch h.step {
	case 1:
		h.read.Cancel()
	case 2:
		future.Cancel(h.wait)
	case 3:
		h.write.Cancel()
	}
	_ = h.s.Close()
	h.p.cancelled.Add(1)
}

// client sends req and returns the reply ("" when the server hung up).
func client(addr, req string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req+"\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, io.EOF) && !isReset(err) {
		return string(b), err
	}
	return string(b), nil
}

// isReset reports a connection the server closed or reset without reading.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// clients runs one client per request concurrently and returns the replies
// by request index.
func clients(addr string, reqs []string) ([]string, []error, *sync.WaitGroup) {
	replies := make([]string, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i], errs[i] = client(addr, req)
		}()
	}
	return replies, errs, &wg
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func startServe(t *testing.T, rt *blitz.Runtime, p *serveProbe, cfg blitz.ServeConfig) (string, blitz.JoinHandle[blitz.ServeStats]) {
	t.Helper()
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.AddrPort().String()
	h := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, newLineHandler(p), cfg))
	return addr, h
}

// TestServeGracefulStopWaitsForHandlersMidRequest stops a server while every
// handler is in the middle of a request, then lets them finish: all of
// them answer, none is cancelled, and the listener is closed.
func TestServeGracefulStopWaitsForHandlersMidRequest(t *testing.T) {
	n := 16
	if testing.Short() {
		n = 6
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p := &serveProbe{release: blitz.NewCoordinator()}
		stop := blitz.NewCoordinator()
		stopped := stop.WhenTriggered()
		addr, h := startServe(t, rt, p, blitz.ServeConfig{Stop: stopped})

		reqs := make([]string, n)
		for i := range reqs {
			reqs[i] = "slow"
		}
		replies, errs, wg := clients(addr, reqs)
		waitFor(t, "every handler mid-request", func() bool { return p.requests.Load() == int32(n) })
		stop.Trigger()
		time.Sleep(20 * time.Millisecond) // let the server see the stop while handlers wait
		p.release.Trigger()
		stats, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		wg.Wait()
		for i := range reqs {
			assert.NoError(t, errs[i])
			assert.Equal(t, "done:slow", replies[i], "client %d", i)
		}
		assert.Equal(t, blitz.ServeStats{Accepted: n, Completed: n}, stats)
		assert.Zero(t, p.cancelled.Load())
		// The listener is closed: a new client is refused.
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		assert.Error(t, err, "the listener was closed by the stop")
	})
}

// TestServeGraceRunsOutCancelsTheRest mixes handlers that answered, failed
// and hang: at the stop, those that hang are cancelled once the grace
// period ran out, and the counts say so.
func TestServeGraceRunsOutCancelsTheRest(t *testing.T) {
	quick, fail, stuck := 10, 3, 4
	if testing.Short() {
		quick, fail, stuck = 4, 2, 2
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p := &serveProbe{release: blitz.NewCoordinator()}
		stop := blitz.NewCoordinator()
		stopped := stop.WhenTriggered()
		addr, h := startServe(t, rt, p, blitz.ServeConfig{Stop: stopped, Grace: 50 * time.Millisecond})

		var reqs []string
		for range quick {
			reqs = append(reqs, "quick")
		}
		for range fail {
			reqs = append(reqs, "fail")
		}
		replies, errs, wg := clients(addr, reqs)
		wg.Wait()
		for i, req := range reqs {
			require.NoError(t, errs[i])
			if req == "quick" {
				assert.Equal(t, "done:quick", replies[i])
			} else {
				assert.Empty(t, replies[i])
			}
		}
		stuckReqs := make([]string, stuck)
		for i := range stuckReqs {
			stuckReqs[i] = "stuck"
		}
		replies, errs, wg = clients(addr, stuckReqs)
		waitFor(t, "the stuck handlers mid-request", func() bool { return p.requests.Load() == int32(quick+fail+stuck) })
		start := time.Now()
		stop.Trigger()
		stats, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(start), 40*time.Millisecond, "the grace period was waited")
		wg.Wait()
		for i := range stuckReqs {
			assert.NoError(t, errs[i])
			assert.Empty(t, replies[i], "a cancelled handler did not answer")
		}
		assert.Equal(t, quick+fail+stuck, stats.Accepted)
		assert.Equal(t, quick+fail, stats.Completed)
		assert.Equal(t, fail, stats.Failed)
		assert.Equal(t, stuck, stats.Cancelled)
		assert.NoError(t, stats.Err)
		assert.EqualError(t, stats.HandlerErr, "failed on purpose")
		assert.Equal(t, int32(stuck), p.cancelled.Load())
	})
}

// TestServeStopsWhenListenerClosed: closing the listener from outside stops
// the server without an error, and a negative Grace cancels the handlers
// at once.
func TestServeStopsWhenListenerClosed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p := &serveProbe{release: blitz.NewCoordinator()}
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		h := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, newLineHandler(p), blitz.ServeConfig{Grace: -1}))
		replies, errs, wg := clients(l.AddrPort().String(), []string{"stuck"})
		waitFor(t, "the handler mid-request", func() bool { return p.requests.Load() == 1 })
		require.NoError(t, l.Close())
		stats, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		wg.Wait()
		assert.NoError(t, errs[0])
		assert.Empty(t, replies[0])
		assert.Equal(t, blitz.ServeStats{Accepted: 1, Cancelled: 1}, stats)
	})
}

// TestServeCancelCancelsHandlers: cancelling the server's task closes the
// listener and cancels the handlers in flight.
func TestServeCancelCancelsHandlers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p := &serveProbe{release: blitz.NewCoordinator()}
		addr, h := startServe(t, rt, p, blitz.ServeConfig{})
		const n = 3
		replies, errs, wg := clients(addr, []string{"stuck", "stuck", "slow"})
		waitFor(t, "the handlers mid-request", func() bool { return p.requests.Load() == n })
		h.Cancel()
		_, err := h.Wait(testCtx(t))
		require.ErrorIs(t, err, blitz.ErrCancelled)
		waitFor(t, "the handlers cancelled", func() bool { return p.cancelled.Load() == n })
		wg.Wait()
		for i := range n {
			assert.NoError(t, errs[i])
			assert.Empty(t, replies[i])
		}
	})
}

// TestServeManyConnectionsStress serves many short connections from
// concurrent clients and stops: every request is answered exactly once.
func TestServeManyConnectionsStress(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p := &serveProbe{release: blitz.NewCoordinator()}
		stop := blitz.NewCoordinator()
		stopped := stop.WhenTriggered()
		addr, h := startServe(t, rt, p, blitz.ServeConfig{Stop: stopped, Grace: 10 * time.Second})
		reqs := make([]string, n)
		for i := range reqs {
			reqs[i] = "quick"
		}
		replies, errs, wg := clients(addr, reqs)
		wg.Wait()
		for i := range reqs {
			require.NoError(t, errs[i])
			require.Equal(t, "done:quick", replies[i])
		}
		stop.Trigger()
		stats, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, blitz.ServeStats{Accepted: n, Completed: n}, stats)
	})
}

// TestServeHandlerFunctionPanics: a handler function that panics for one
// connection, or returns nil for another, costs that connection only: it
// is closed, counted as failed (the first failure, a *PanicError, is the
// one reported), and the server goes on serving the next.
func TestServeHandlerFunctionPanics(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		p := &serveProbe{release: blitz.NewCoordinator()}
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		var calls atomic.Int32
		lines := newLineHandler(p)
		handler := func(s *blitz.TCPStream) future.Future[error] {
			switch calls.Add(1) {
			case 1:
				panic("no handler for the first")
			case 2:
				return nil
			}
			return lines(s)
		}
		h := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, handler, blitz.ServeConfig{}))
		replies, errs, wg := clients(l.AddrPort().String(), []string{"quick"})
		wg.Wait()
		assert.NoError(t, errs[0], "the first connection was closed, not left hanging")
		assert.Empty(t, replies[0])
		replies, errs, wg = clients(l.AddrPort().String(), []string{"quick"})
		wg.Wait()
		assert.NoError(t, errs[0], "the connection whose handler function returned nil was closed")
		assert.Empty(t, replies[0])
		replies, errs, wg = clients(l.AddrPort().String(), []string{"quick"})
		wg.Wait()
		require.NoError(t, errs[0])
		assert.Equal(t, "done:quick", replies[0], "the server went on")
		require.NoError(t, l.Close())
		stats, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, 3, stats.Accepted)
		assert.Equal(t, 3, stats.Completed)
		assert.Equal(t, 2, stats.Failed)
		var pe *blitz.PanicError
		require.ErrorAs(t, stats.HandlerErr, &pe)
		assert.Equal(t, "no handler for the first", pe.Value)
	})
}
