package blitz_test

import (
	"bytes"
	"fmt"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logCapture redirects the standard logger into a buffer for the rest of
// the test. Tests that use it must not run in parallel with others.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// String returns what was logged so far.
func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func captureLog(t *testing.T) *logCapture {
	c := &logCapture{}
	out := log.Writer()
	log.SetOutput(c)
	t.Cleanup(func() { log.SetOutput(out) })
	return c
}

// panicInTask panics with v; its name must show in the reported stack.
//
//go:noinline
func panicInTask(v any) { panic(v) }

// TestDetachedPanicLogged: with no Config.OnPanic, a detached task's panic
// and its stack go to the standard logger, and the runtime goes on.
func TestDetachedPanicLogged(t *testing.T) {
	logs := captureLog(t)
	rt := newRuntime(t, blitz.Config{Workers: 1})
	blitz.SpawnOn(rt.Handle(), future.Future[int](future.PollFn(func(*future.Context) (int, bool) {
		panicInTask("unobserved boom")
		return 0, true
	}))).Detach()
	pollUntil(t, "the panic is logged", func() bool { return strings.Contains(logs.String(), "unobserved boom") })
	assert.Contains(t, logs.String(), "panicInTask", "the stack is logged")
	v, err := blitz.SpawnOn(rt.Handle(), future.Ready(1)).Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 1, v)
	require.Equal(t, uint64(1), rt.Stats().Panicked)
}

// panicWaker is a Waker whose Wake panics, as a buggy hand-written waker
// might.
type panicWaker struct{ wakes atomic.Int32 }

func (p *panicWaker) Wake() {
	p.wakes.Add(1)
	panic(fmt.Sprintf("waker boom %p", p))
}

// TestIOWakerPanicContained: reads on several connections wait with Wakers
// called by the I/O driver when their data arrives, every other one a
// Waker that panics. Each panic is contained and reported (OnPanic, or the
// log without it) and counted; the other Wakers of the same batch are all
// called, every read completed, and the workers go on.
func TestIOWakerPanicContained(t *testing.T) {
	for _, withOnPanic := range []bool{true, false} {
		t.Run(map[bool]string{true: "OnPanic", false: "log"}[withOnPanic], func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
				testIOWakerPanic(t, cfg, withOnPanic)
			})
		})
	}
}

func testIOWakerPanic(t *testing.T, cfg blitz.Config, withOnPanic bool) {
	const conns = 8
	var reported chan *blitz.PanicError
	var logs *logCapture
	if withOnPanic {
		reported = make(chan *blitz.PanicError, conns)
		cfg.OnPanic = func(pe *blitz.PanicError) { reported <- pe }
	} else {
		logs = captureLog(t)
	}
	cfg.Workers = 2
	rt := newRuntime(t, cfg)

	type reader struct {
		s    *blitz.TCPStream
		peer net.Conn
		buf  []byte
		rd   *blitz.ReadFuture
		pw   *panicWaker
		sig  *waker.Signal
	}
	rs := make([]*reader, conns)
	for i := range rs {
		s, peer := tcpPair(t, rt)
		r := &reader{s: s, peer: peer, buf: make([]byte, 16)}
		r.rd = s.Read(r.buf)
		var wk waker.Waker
		if i%2 == 0 {
			r.pw = &panicWaker{}
			wk = waker.New(r.pw)
		} else {
			r.sig = &waker.Signal{}
			wk = waker.New(r.sig)
		}
		if res, ok := r.rd.Poll(future.NewContext(wk)); ok {
			t.Fatalf("read %d completed before any data: %v", i, res.Err)
		}
		rs[i] = r
	}
	for i, r := range rs {
		_, err := r.peer.Write([]byte(fmt.Sprintf("data %d", i)))
		require.NoError(t, err)
	}
	for i, r := range rs {
		if r.sig != nil {
			require.True(t, woken(r.sig), "read %d's waker, beside the panicking ones, was not called", i)
			continue
		}
		pollUntil(t, fmt.Sprintf("read %d's panicking waker called", i), func() bool { return r.pw.wakes.Load() > 0 })
	}
	// Every read completed: polled again, each returns its data.
	for i, r := range rs {
		var sig waker.Signal
		res, ok := r.rd.Poll(future.NewContext(waker.New(&sig)))
		require.True(t, ok, "read %d did not complete", i)
		require.NoError(t, res.Err)
		require.Equal(t, fmt.Sprintf("data %d", i), string(r.buf[:res.Value]))
	}
	if withOnPanic {
		for range conns / 2 {
			select {
			case pe := <-reported:
				require.Contains(t, fmt.Sprint(pe.Value), "waker boom")
				require.NotEmpty(t, pe.Stack)
			case <-time.After(10 * time.Second):
				t.Fatal("a waker panic was not reported to OnPanic")
			}
		}
	} else {
		pollUntil(t, "every waker panic logged", func() bool { return strings.Count(logs.String(), "waker boom") == conns/2 })
		assert.Contains(t, logs.String(), "panicWaker", "the stack is logged")
	}
	require.Equal(t, uint64(conns/2), rt.Stats().Panicked)
	// The workers survived.
	for i := range 20 {
		v, err := blitz.SpawnOn(rt.Handle(), future.Ready(i)).Wait(testCtx(t))
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
}
