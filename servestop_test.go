package blitz_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// intStop is a stop future of a value type that Serve polls through
// reflection: it completes once done is closed.
type intStop struct{ done chan struct{} }

func (s intStop) Poll(cx *future.Context) (int, bool) {
	select {
	case <-s.done:
		return 1, true
	default:
		wk := cx.Waker()
		go func() { <-s.done; wk.Wake() }()
		return 0, false
	}
}

// serveUntilStopped serves with stop and returns what Serve reported, after
// checking that it was serving (a client got an answer) until trigger ran.
func serveUntilStopped(t *testing.T, stop any, trigger func()) blitz.ServeStats {
	t.Helper()
	rt := newRuntime(t, blitz.Config{Workers: 2})
	p := &serveProbe{release: blitz.NewCoordinator()}
	p.release.Trigger()
	addr, h := startServe(t, rt, p, blitz.ServeConfig{Stop: stop})
	replies, errs, wg := clients(addr, []string{"quick"})
	wg.Wait()
	if errs[0] != nil || replies[0] != "done:quick" {
		t.Fatalf("before the stop: %q, %v", replies[0], errs[0])
	}
	trigger()
	stats, err := h.Wait(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	// The listening socket's close may complete in the backend just
	// after Serve returns (an accept in flight is cancelled first).
	waitFor(t, "the listener closed", func() bool {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	return stats
}

// TestServeStopIsAnyFuture: Serve stops on a future of any value type, a
// signal's included, and on a context, with no adapter.
func TestServeStopIsAnyFuture(t *testing.T) {
	t.Run("signal", func(t *testing.T) {
		requireSignals(t)
		stop := blitz.Signal(sigUSR2) // a Future[Result[os.Signal]]
		stats := serveUntilStopped(t, stop, func() { raise(t, sigUSR2) })
		if stats.Err != nil || stats.Accepted != 1 {
			t.Fatalf("stats %+v", stats)
		}
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stats := serveUntilStopped(t, ctx, cancel)
		if stats.Err != nil || stats.Accepted != 1 {
			t.Fatalf("stats %+v", stats)
		}
	})
	t.Run("sleep", func(t *testing.T) {
		stats := serveUntilStopped(t, blitz.Sleep(100*time.Millisecond), func() {})
		if stats.Err != nil {
			t.Fatalf("stats %+v", stats)
		}
	})
	t.Run("reflected", func(t *testing.T) {
		done := make(chan struct{})
		stats := serveUntilStopped(t, intStop{done}, func() { close(done) })
		if stats.Err != nil || stats.Accepted != 1 {
			t.Fatalf("stats %+v", stats)
		}
	})
}

// TestServeStopInvalid: a Stop that is no future stops the server at once
// with an error wrapping ErrInvalidStop; a nil future is no stop at all.
func TestServeStopInvalid(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	for _, stop := range []any{"soon", 42, struct{ Poll func() }{}} {
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		stats, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Serve(l, newLineHandler(&serveProbe{}), blitz.ServeConfig{Stop: stop}))
		if err != nil || !errors.Is(stats.Err, blitz.ErrInvalidStop) {
			t.Fatalf("Stop %#v: stats %+v, %v; want ErrInvalidStop", stop, stats, err)
		}
	}
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var none *blitz.SignalFuture
	ctx, cancel := context.WithTimeout(testCtx(t), 50*time.Millisecond)
	defer cancel()
	_, err = blitz.BlockOn(ctx, rt.Handle(), blitz.Serve(l, newLineHandler(&serveProbe{}), blitz.ServeConfig{Stop: none}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a nil Stop: %v; want the server to serve until the context ended", err)
	}
}
