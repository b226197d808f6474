package asyncbench

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// watchdog bounds every wait of these tests.
const watchdog = 20 * time.Second

// outcome is what one run of a computation produced.
type outcome struct {
	value   int
	err     error
	written []int // the connection's writes, for handle
}

// sameOutcome reports whether a and b agree: the value, the error (same
// message, and both or neither matching each of sentinels), and the writes.
func sameOutcome(a, b outcome, sentinels ...error) bool {
	if a.value != b.value || !slices.Equal(a.written, b.written) || (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err == nil {
		return true
	}
	for _, s := range sentinels {
		if errors.Is(a.err, s) != errors.Is(b.err, s) {
			return false
		}
	}
	return a.err.Error() == b.err.Error()
}

// futureKinds are the forms of handle and awaitLoop as futures: generated,
// hand-written, and generated then edited as proposed_test.go says.
var futureKinds = []string{"generated", "hand", "proposed"}

// handleKinds are the forms of handle as a future: futureKinds and
// handleClosing, handle with a deferred Close.
var handleKinds = append(slices.Clip(futureKinds), "generatedClosing")

// runHandle runs handle in the given form over a connection with script,
// releasing the gate once the handler is at it (or has returned).
func runHandle(t *testing.T, h blitz.Handle, kind string, script []int) outcome {
	t.Helper()
	c := NewConn(script...)
	g := NewGate()
	var out outcome
	if kind == "goroutine" {
		done := make(chan struct{})
		go func() {
			defer close(done)
			out.value, out.err = handleBlocking(c, g)
		}()
		waitFor(t, watchdog, "the goroutine at the gate", func() bool {
			select {
			case <-done:
				return true
			default:
				return g.Waiting.Load() == 1
			}
		})
		g.Release()
		select {
		case <-done:
		case <-time.After(watchdog):
			t.Fatal("the released goroutine did not return")
		}
		out.written = c.Written
		return out
	}
	var f future.Future[future.Result[int]]
	switch kind {
	case "generated":
		f = handleAsync(c, g)
	case "generatedClosing":
		f = handleClosingAsync(c, g)
	case "hand":
		f = newHandleFuture(c, g)
	case "proposed":
		f = newHandleProposed(c, g)
	default:
		t.Fatalf("no kind %q", kind)
	}
	jh := blitz.SpawnOn(h, f)
	waitFor(t, watchdog, "the task at the gate", func() bool { return jh.IsFinished() || g.Waiting.Load() == 1 })
	g.Release()
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	res, err := jh.Wait(ctx)
	if err != nil {
		t.Fatalf("%s %v: %v", kind, script, err)
	}
	out.value, out.err = res.Get()
	out.written = c.Written
	if kind == "generatedClosing" && !c.Closed {
		t.Fatalf("%s %v: returned without its deferred Close", kind, script)
	}
	return out
}

// handleScripts returns the scripts TestHandleSameOutcome runs: fixed ones
// for every path, then random ones.
func handleScripts(t *testing.T) [][]int {
	scripts := [][]int{{}, {1}, {2}, {-1}, {2, -3}, {1, 2, 3, 4}, {4, 4, 4, 4, 4}, {7, 0, 9, -2, 4}}
	n := 200
	if testing.Short() {
		n = 20
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range n {
		s := make([]int, rng.IntN(12))
		for i := range s {
			s[i] = rng.IntN(40) - 1 // -1 now and then
		}
		scripts = append(scripts, s)
	}
	return scripts
}

// TestHandleSameOutcome: the generated handler, the hand-written one and the
// goroutine return the same total or error and write the same values, for
// every script.
func TestHandleSameOutcome(t *testing.T) {
	for _, backend := range []string{blitz.BackendAuto, blitz.BackendNone} {
		rt := newRuntime(t, blitz.Config{Backend: backend})
		for _, script := range handleScripts(t) {
			want := runHandle(t, rt.Handle(), "goroutine", script)
			for _, kind := range handleKinds {
				if got := runHandle(t, rt.Handle(), kind, script); !sameOutcome(got, want, ErrNegative) {
					t.Fatalf("backend %q, script %v: %s gave %+v, the goroutine %+v", rt.Backend(), script, kind, got, want)
				}
			}
		}
	}
}

// TestHandleCancelAtGateWithdrawsTheWait: a handler cancelled while it waits
// at the gate, in every form of future, leaves no waiter behind: a notification
// sent afterwards is stored as the Notify's permit instead of going to the
// cancelled task.
func TestHandleCancelAtGateWithdrawsTheWait(t *testing.T) {
	rt := newRuntime(t, blitz.Config{})
	for _, kind := range handleKinds {
		c, g := NewConn(1), NewGate()
		var f future.Future[future.Result[int]] = handleAsync(c, g)
		switch kind {
		case "hand":
			f = newHandleFuture(c, g)
		case "proposed":
			f = newHandleProposed(c, g)
		case "generatedClosing":
			f = handleClosingAsync(c, g)
		}
		jh := blitz.SpawnOn(rt.Handle(), f)
		waitFor(t, watchdog, "the task at the gate", func() bool { return g.Waiting.Load() == 1 })
		jh.Cancel()
		ctx, cancel := context.WithTimeout(context.Background(), watchdog)
		_, err := jh.Wait(ctx)
		cancel()
		if !errors.Is(err, blitz.ErrCancelled) {
			t.Fatalf("%s: Wait after Cancel gave %v, want ErrCancelled", kind, err)
		}
		g.n.NotifyOne()
		if !g.n.TryNotified() {
			t.Fatalf("%s: a NotifyOne after the cancel left no permit: it went to the cancelled wait", kind)
		}
		if kind == "generatedClosing" && !c.Closed {
			t.Fatalf("%s: cancelled without its deferred Close", kind)
		}
	}
}

// gatherCase is one fan-out: for each receiver, whether its value is sent
// before the gatherer starts, after it started, or never (the sender closes).
type gatherCase []byte // 'b' before, 'a' after, 'c' closed

// runGather runs gather in the given form over len(gc) oneshots whose values
// are 10, 11, ...
func runGather(t *testing.T, h blitz.Handle, kind string, gc gatherCase) outcome {
	t.Helper()
	ss := make([]channels.OneshotSender[int], len(gc))
	rs := make([]channels.OneshotReceiver[int], len(gc))
	for i := range gc {
		ss[i], rs[i] = channels.NewOneshot[int]()
	}
	send := func(when byte) {
		for i, w := range gc {
			switch {
			case w != when:
			case w == 'c':
				ss[i].Close()
			default:
				if err := ss[i].Send(10 + i); err != nil {
					t.Errorf("send %d: %v", i, err)
				}
			}
		}
	}
	send('b')
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	var out outcome
	switch kind {
	case "goroutine":
		done := make(chan struct{})
		go func() {
			defer close(done)
			out.value, out.err = gatherBlocking(ctx, rs)
		}()
		send('a')
		send('c')
		<-done
	case "generated", "hand", "proposed":
		f := gatherAsync(rs)
		switch kind {
		case "hand":
			f = newGatherFuture(rs)
		case "proposed":
			f = newGatherProposed(rs)
		}
		jh := blitz.SpawnOn(h, f)
		send('a')
		send('c')
		res, err := jh.Wait(ctx)
		if err != nil {
			t.Fatalf("%s %s: %v", kind, gc, err)
		}
		out.value, out.err = res.Get()
	default:
		t.Fatalf("no kind %q", kind)
	}
	return out
}

// TestGatherSameOutcome: the generated fan-out, the hand-written one, the
// proposed one and the goroutine give the same weighted sum, or the same error for the first
// closed sender (matching channels.ErrClosed), whichever results were there
// before they started.
func TestGatherSameOutcome(t *testing.T) {
	rt := newRuntime(t, blitz.Config{})
	cases := []gatherCase{{}, gatherCase("b"), gatherCase("a"), gatherCase("c"), gatherCase("bab"), gatherCase("aaaaaaaa"), gatherCase("bac")}
	n := 100
	if testing.Short() {
		n = 10
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range n {
		gc := make(gatherCase, rng.IntN(9))
		for i := range gc {
			gc[i] = "bbbaaac"[rng.IntN(7)]
		}
		cases = append(cases, gc)
	}
	for _, gc := range cases {
		want := runGather(t, rt.Handle(), "goroutine", gc)
		for _, kind := range futureKinds {
			if got := runGather(t, rt.Handle(), kind, gc); !sameOutcome(got, want, channels.ErrClosed) {
				t.Fatalf("case %q: %s gave %+v, the goroutine %+v", gc, kind, got, want)
			}
		}
	}
}

// TestAwaitLoopSameOutcome: the generated await loop (a fresh future per
// await, or one reused), the hand-written one and the proposed one sum
// 0..k-1, on both kinds of runtime.
func TestAwaitLoopSameOutcome(t *testing.T) {
	for _, backend := range []string{blitz.BackendAuto, blitz.BackendNone} {
		rt := newRuntime(t, blitz.Config{Backend: backend})
		for _, k := range []int{0, 1, 2, 7, 1000} {
			fs := map[string]future.Future[int]{
				"generated":       awaitLoopAsync(k),
				"generatedReused": awaitLoopReusedAsync(new(LaterFuture), k),
				"hand":            newAwaitLoopFuture(k),
				"proposed":        newAwaitLoopProposed(k),
			}
			for kind, f := range fs {
				ctx, cancel := context.WithTimeout(context.Background(), watchdog)
				got, err := blitz.SpawnOn(rt.Handle(), f).Wait(ctx)
				cancel()
				if want := k * (k - 1) / 2; err != nil || got != want {
					t.Fatalf("backend %q, k=%d: %s gave %d, %v; want %d", rt.Backend(), k, kind, got, err, want)
				}
			}
		}
	}
}
