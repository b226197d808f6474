package dumpwarn

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newRuntime(t *testing.T, cfg blitz.Config) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	return rt
}

// dumpUntil dumps rt until the dump holds want, for up to ten seconds.
func dumpUntil(t *testing.T, rt *blitz.Runtime, want string) string {
	t.Helper()
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var b bytes.Buffer
		if err := rt.Dump(&b); err != nil {
			t.Fatal(err)
		}
		if out = b.String(); strings.Contains(out, want) {
			return out
		}
	}
	t.Fatalf("no %q in the dump:\n%s", want, out)
	return ""
}

// TestLostWakerWarned: a future written by hand that returns not-ready
// without taking its Waker (a lost wake-up) is warned of.
func TestLostWakerWarned(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("forgetful", future.PollFn(func(*future.Context) (int, bool) {
		return 0, false // registers nothing: nothing will ever wake it
	})))
	defer h.Cancel()
	out := dumpUntil(t, rt, "WARNING (lost waker)")
	t.Logf("%s", out)
	if !strings.Contains(out, `WARNING (lost waker): task 1 "forgetful" is idle for `) {
		t.Fatalf("the warning does not name the task:\n%s", out)
	}
}

// TestSelfWakesWarned: a task that wakes itself in every poll instead of
// waiting is warned of.
func TestSelfWakesWarned(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	stop := make(chan struct{})
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("spinner", future.PollFn(func(cx *future.Context) (int, bool) {
		select {
		case <-stop:
			return 0, true
		default:
		}
		cx.Waker().Wake() // a busy loop
		return 0, false
	})))
	out := dumpUntil(t, rt, "WARNING (wakes itself)")
	close(stop)
	if _, err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", out)
	if !strings.Contains(out, `WARNING (wakes itself): task 1 "spinner" was woken during `) {
		t.Fatalf("the warning does not name the task:\n%s", out)
	}
}

// TestNeverYieldedWarned: with PollTiming, a task still in its first poll
// past SlowPoll is warned of.
func TestNeverYieldedWarned(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2, PollTiming: true, SlowPoll: 5 * time.Millisecond})
	release := make(chan struct{})
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("hog", future.PollFn(func(*future.Context) (int, bool) {
		<-release
		return 0, true
	})))
	out := dumpUntil(t, rt, "WARNING (never yielded)")
	close(release)
	if _, err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", out)
	if !strings.Contains(out, `WARNING (never yielded): task 1 "hog" has been in its first poll for `) {
		t.Fatalf("the warning does not name the task:\n%s", out)
	}
}

// TestFailedTasksKept: a task that panicked, and one that was cancelled,
// stay in the dump after their end; a task that returned does not.
func TestFailedTasksKept(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	_, _ = blitz.SpawnOn(rt.Handle(), blitz.Named("victim", future.PollFn(func(*future.Context) (int, bool) {
		panic("boom")
	}))).Wait(context.Background())
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("cancelled", future.PollFn(func(cx *future.Context) (int, bool) {
		_ = cx.Waker()
		return 0, false
	})))
	h.Cancel()
	_, _ = h.Wait(context.Background())
	_, _ = blitz.SpawnOn(rt.Handle(), blitz.Named("fine", future.Ready(1))).Wait(context.Background())
	out := dumpUntil(t, rt, "recently failed")
	t.Logf("%s", out)
	for _, want := range []string{`task 1 "victim" panicked `, `boom`, `task 2 "cancelled" was cancelled `} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the dump", want)
		}
	}
	if strings.Contains(out, `"fine"`) {
		t.Error("a task that returned is kept")
	}
}

// TestHealthyWaitsDrawNoWarning: tasks waiting on sleeps, channels,
// locks, semaphores, notifies, a select, a JoinHandle, a JoinSet and a
// socket read draw no warning.
func TestHealthyWaitsDrawNoWarning(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	in := channels.NewBounded[int](1)
	var mu syncprim.Mutex
	sem := syncprim.NewSemaphore(1)
	var n syncprim.Notify
	stopTx, stopRx := channels.NewOneshot[int]()
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("waitAll", waitAllAsync(in, &mu, sem, &n, future.Map(stopRx.Recv(), func(r future.Result[int]) int { return r.Value }))))
	joiner := blitz.SpawnOn(rt.Handle(), blitz.Named("joiner", future.Map(h.Future(), func(r future.Result[int]) int { return r.Value })))

	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.AddrPort().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A connection task waiting to read.
	accepted, err := blitz.BlockOn(context.Background(), rt.Handle(), l.Accept())
	if err != nil || accepted.Err != nil {
		t.Fatal(err, accepted.Err)
	}
	conn := accepted.Value
	defer conn.Close()
	buf := make([]byte, 8)
	reader := blitz.SpawnOn(rt.Handle(), blitz.Named("reader", conn.Read(buf)))
	defer reader.Cancel()

	check := func(stage string) {
		t.Helper()
		time.Sleep(20 * time.Millisecond)
		var b bytes.Buffer
		if err := rt.Dump(&b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "WARNING") {
			t.Fatalf("%s: a healthy wait warned of:\n%s", stage, b.String())
		}
	}
	check("sleep")
	if err := in.TrySend(1); err != nil {
		t.Fatal(err)
	}
	check("recv")
	n.NotifyOne()
	check("select")
	if err := in.TrySend(2); err != nil {
		t.Fatal(err)
	}
	check("stop")
	_ = stopTx.Send(3)
	if v, err := joiner.Wait(context.Background()); err != nil || v != 6 {
		t.Fatalf("got %d, %v", v, err)
	}
	check("done")
}
