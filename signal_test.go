package blitz_test

import (
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// pollUntil fails the test unless cond holds within 10 seconds, checking
// every millisecond.
func pollUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// signalListeners returns the dispatcher's listener count.
func signalListeners() int {
	n, _ := blitz.SignalListeners()
	return n
}

// recvSignal receives the next signal of s from a goroutine, with BlockOn.
func recvSignal(t testing.TB, h blitz.Handle, s *blitz.SignalStream) (os.Signal, error) {
	t.Helper()
	f := s.Next()
	r, err := blitz.BlockOn(testCtx(t), h, future.Future[future.Result[os.Signal]](f))
	if err != nil {
		t.Fatalf("BlockOn: %v", err)
	}
	return r.Get()
}

// mustSignals opens a stream of sigs, closed when the test ends.
func mustSignals(t testing.TB, sigs ...os.Signal) *blitz.SignalStream {
	t.Helper()
	s, err := blitz.Signals(sigs...)
	if err != nil {
		t.Fatalf("Signals: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// requireNoSignal fails the test if s has a signal ready now (what names
// the unwanted signal in the message); the Next it polled is cancelled.
func requireNoSignal(t *testing.T, s *blitz.SignalStream, what string) {
	t.Helper()
	var ws waker.Signal
	f := s.Next()
	defer f.Cancel()
	if r, ok := manualPoll(future.Future[future.Result[os.Signal]](f), &ws); ok {
		t.Fatalf("%s: %v, %v", what, r.Value, r.Err)
	}
}

// pollOn polls f once with a Context of h's runtime (BlockOn's), which
// binds f's listener to that runtime, and returns what the poll returned.
// A pending f stays pending, registered with the spent Waker of that
// BlockOn until its next poll.
func pollOn(t testing.TB, h blitz.Handle, f *blitz.SignalFuture) (future.Result[os.Signal], bool) {
	t.Helper()
	type polled struct {
		r  future.Result[os.Signal]
		ok bool
	}
	p, err := blitz.BlockOn(testCtx(t), h, future.PollFn(func(cx *future.Context) (polled, bool) {
		r, ok := f.Poll(cx)
		return polled{r, ok}, true
	}))
	if err != nil {
		t.Fatalf("BlockOn: %v", err)
	}
	return p.r, p.ok
}

// manualPoll polls f once with a Context whose Waker signals sig.
func manualPoll[T any](f future.Future[T], sig *waker.Signal) (T, bool) {
	return f.Poll(future.NewContext(waker.New(sig)))
}

// woken reports whether sig was woken within 10 seconds.
func woken(sig *waker.Signal) bool {
	select {
	case <-sig.Chan():
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

func TestSignalStreamReceivesSignal(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	s := mustSignals(t, sigUSR1)
	raise(t, sigUSR1)
	sig, err := recvSignal(t, rt.Handle(), s)
	if err != nil || sig != sigUSR1 {
		t.Fatalf("Next = %v, %v; want %v", sig, err, sigUSR1)
	}
}

func TestSignalEveryListenerReceivesEverySignal(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	a := mustSignals(t, sigUSR1)
	b := mustSignals(t, sigUSR1, sigUSR2)
	raise(t, sigUSR1)
	for name, s := range map[string]*blitz.SignalStream{"a": a, "b": b} {
		if sig, err := recvSignal(t, rt.Handle(), s); err != nil || sig != sigUSR1 {
			t.Fatalf("%s: Next = %v, %v; want %v", name, sig, err, sigUSR1)
		}
	}
	// b listens for SIGUSR2 too, a does not.
	raise(t, sigUSR2)
	if sig, err := recvSignal(t, rt.Handle(), b); err != nil || sig != sigUSR2 {
		t.Fatalf("b: Next = %v, %v; want %v", sig, err, sigUSR2)
	}
	requireNoSignal(t, a, "a signal it does not listen for")
}

func TestSignalListenerMissesSignalsBeforeIt(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	early := mustSignals(t, sigUSR1)
	raise(t, sigUSR1)
	// early has it: the signal was dispatched before late existed.
	if sig, err := recvSignal(t, rt.Handle(), early); err != nil || sig != sigUSR1 {
		t.Fatalf("early: Next = %v, %v", sig, err)
	}
	late := mustSignals(t, sigUSR1, sigUSR2)
	raise(t, sigUSR2)
	if sig, err := recvSignal(t, rt.Handle(), late); err != nil || sig != sigUSR2 {
		t.Fatalf("late: first signal = %v, %v; want %v (the earlier %v is not its)", sig, err, sigUSR2, sigUSR1)
	}
}

func TestSignalCloseWakesPendingNext(t *testing.T) {
	requireSignals(t)
	s := mustSignals(t, sigUSR1)
	before := signalListeners()
	var ws waker.Signal
	f := s.Next()
	if _, ok := manualPoll(future.Future[future.Result[os.Signal]](f), &ws); ok {
		t.Fatal("Next completed with no signal sent")
	}
	s.Close()
	if !woken(&ws) {
		t.Fatal("Close did not wake the pending Next")
	}
	r, ok := manualPoll(future.Future[future.Result[os.Signal]](f), &ws)
	if !ok || !errors.Is(r.Err, blitz.ErrSignalStreamClosed) {
		t.Fatalf("Next after Close = %v, %v, %v; want ErrSignalStreamClosed", r.Value, r.Err, ok)
	}
	if got := signalListeners(); got != before-1 {
		t.Fatalf("listeners after Close = %d, want %d", got, before-1)
	}
	s.Close() // idempotent
	g := s.Next()
	if r, _ := manualPoll(future.Future[future.Result[os.Signal]](g), &ws); !errors.Is(r.Err, blitz.ErrSignalStreamClosed) {
		t.Fatalf("Next on a closed stream = %v, %v", r.Value, r.Err)
	}
}

func TestSignalCancelLeavesNoListener(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	before, beforeSigs := blitz.SignalListeners()

	// A one-shot future registers at creation and leaves on Cancel, pending
	// or never polled.
	for _, poll := range []bool{false, true} {
		f := blitz.Signal(sigUSR2)
		if n, sigs := blitz.SignalListeners(); n != before+1 || sigs != beforeSigs+1 {
			t.Fatalf("after Signal: %d listeners on %d signals, want %d on %d", n, sigs, before+1, beforeSigs+1)
		}
		if poll {
			var ws waker.Signal
			if _, ok := manualPoll(future.Future[future.Result[os.Signal]](f), &ws); ok {
				t.Fatal("Signal completed with no signal sent")
			}
		}
		f.Cancel()
		f.Cancel()
		if n, sigs := blitz.SignalListeners(); n != before || sigs != beforeSigs {
			t.Fatalf("after Cancel (polled %v): %d listeners on %d signals, want %d on %d", poll, n, sigs, before, beforeSigs)
		}
	}

	// A cancelled Next loses no signal: the next Next gets it.
	s := mustSignals(t, sigUSR1)
	var ws waker.Signal
	f := s.Next()
	if _, ok := manualPoll(future.Future[future.Result[os.Signal]](f), &ws); ok {
		t.Fatal("Next completed with no signal sent")
	}
	f.Cancel()
	raise(t, sigUSR1)
	if sig, err := recvSignal(t, rt.Handle(), s); err != nil || sig != sigUSR1 {
		t.Fatalf("Next after a cancelled Next = %v, %v", sig, err)
	}
}

func TestSignalOneShotLeavesWithItsSignal(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	before := signalListeners()
	f := blitz.Signal(sigUSR1, sigUSR2)
	raise(t, sigUSR2)
	// The dispatcher removes the listener as it delivers.
	pollUntil(t, "the one-shot listener leaves", func() bool { return signalListeners() == before })
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[os.Signal]](f))
	if err != nil || r.Err != nil || r.Value != sigUSR2 {
		t.Fatalf("Signal = %v, %v, %v; want %v", r.Value, r.Err, err, sigUSR2)
	}
}

func TestSignalBufferHoldsSignalsBetweenNexts(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	s := mustSignals(t, sigUSR1, sigUSR2)
	// Two real signals with no Next pending; the kernel may deliver them
	// in either order.
	raise(t, sigUSR1)
	raise(t, sigUSR2)
	var got []os.Signal
	for range 2 {
		sig, err := recvSignal(t, rt.Handle(), s)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sig)
	}
	if !slices.Contains(got, sigUSR1) || !slices.Contains(got, sigUSR2) {
		t.Fatalf("received %v, want both %v and %v", got, sigUSR1, sigUSR2)
	}
}

func TestSignalBurstCoalescesBeyondBuffer(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	s := mustSignals(t, sigUSR1, sigUSR2)
	// A burst the kernel would coalesce itself, injected at the dispatcher:
	// 20 SIGUSR1 then one SIGUSR2 into a buffer of 16.
	for range 20 {
		if !blitz.InjectSignal(sigUSR1) {
			t.Fatal("no listener for SIGUSR1")
		}
	}
	blitz.InjectSignal(sigUSR2)
	if d := s.Dropped(); d != 5 {
		t.Fatalf("Dropped = %d, want 5", d)
	}
	// 15 SIGUSR1 kept, and SIGUSR2 kept in place of the 16th: a burst never
	// hides a kind of signal.
	for i := range 16 {
		want := sigUSR1
		if i == 15 {
			want = sigUSR2
		}
		if sig, err := recvSignal(t, rt.Handle(), s); err != nil || sig != want {
			t.Fatalf("signal %d = %v, %v; want %v", i, sig, err, want)
		}
	}
	requireNoSignal(t, s, "a 17th signal")
}

func TestSignalFromTask(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	s := mustSignals(t, sigUSR1)
	// The task receives three signals in a loop, one Next at a time.
	var (
		f     = s.Next()
		got   []os.Signal
		count atomic.Int32
	)
	jh := blitz.SpawnOn(rt.Handle(), future.PollFn(func(cx *future.Context) ([]os.Signal, bool) {
		for len(got) < 3 {
			r, ok := f.Poll(cx)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return nil, true
			}
			got = append(got, r.Value)
			count.Add(1)
			f = s.Next()
		}
		return got, true
	}))
	for i := range int32(3) {
		raise(t, sigUSR1)
		// Wait for the task to take each signal, so that the kernel does
		// not coalesce two pending ones.
		pollUntil(t, "the task receives the signal", func() bool { return count.Load() > i })
	}
	sigs, err := jh.Wait(testCtx(t))
	if err != nil || len(sigs) != 3 || sigs[0] != sigUSR1 {
		t.Fatalf("task = %v, %v; want three %v", sigs, err, sigUSR1)
	}
}

func TestSignalOneShotFromTaskAndBlockOn(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	h := rt.Handle()

	// A task awaiting Hangup: the listener is registered when Hangup
	// returns, before the task first runs.
	jh := blitz.SpawnOn(h, future.Future[future.Result[os.Signal]](blitz.Hangup()))
	raise(t, sigHUP)
	r, err := jh.Wait(testCtx(t))
	if err != nil || r.Err != nil || r.Value != sigHUP {
		t.Fatalf("task: Hangup = %v, %v, %v", r.Value, r.Err, err)
	}

	// BlockOn, from the test's goroutine.
	f := blitz.Signal(sigUSR2)
	raise(t, sigUSR2)
	r, err = blitz.BlockOn(testCtx(t), h, future.Future[future.Result[os.Signal]](f))
	if err != nil || r.Err != nil || r.Value != sigUSR2 {
		t.Fatalf("BlockOn: Signal = %v, %v, %v", r.Value, r.Err, err)
	}
}

func TestSignalErrors(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := rt.Handle()
	if _, err := blitz.Signals(); !errors.Is(err, blitz.ErrNoSignals) {
		t.Fatalf("Signals() = %v, want ErrNoSignals", err)
	}
	if _, err := blitz.Signals(nil); !errors.Is(err, blitz.ErrNoSignals) {
		t.Fatalf("Signals(nil) = %v, want ErrNoSignals", err)
	}
	r, err := blitz.BlockOn(testCtx(t), h, future.Future[future.Result[os.Signal]](blitz.Signal()))
	if err != nil || !errors.Is(r.Err, blitz.ErrNoSignals) {
		t.Fatalf("Signal() = %v, %v, want ErrNoSignals", r.Err, err)
	}
	var zero blitz.SignalFuture
	if r, ok := zero.Poll(future.NewContext(waker.Noop())); !ok || !errors.Is(r.Err, blitz.ErrSignalStreamClosed) {
		t.Fatalf("zero SignalFuture = %v, %v", r.Err, ok)
	}
	// Terminate and Hangup register (or fail as unsupported) without a
	// signal being sent; cancelling them leaves nothing behind.
	before := signalListeners()
	for _, f := range []*blitz.SignalFuture{blitz.Terminate(), blitz.Hangup(), blitz.Interrupt()} {
		f.Cancel()
	}
	if got := signalListeners(); got != before {
		t.Fatalf("listeners = %d after cancelling, want %d", got, before)
	}
}

// TestSignalClosedByShutdownOfRuntimeThatPolledIt: a stream and a
// one-shot future polled once by a runtime belong to it: its shutdown
// closes them with ErrShutdown. A listener first polled by a runtime
// already shut down is closed at that poll.
func TestSignalClosedByShutdownOfRuntimeThatPolledIt(t *testing.T) {
	requireSignals(t)
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	before := signalListeners()
	s, err := blitz.Signals(sigUSR1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	once := blitz.Signal(sigUSR2) // polled once, then neither polled nor cancelled
	next := s.Next()
	for _, f := range []*blitz.SignalFuture{next, once} {
		if _, ok := pollOn(t, rt.Handle(), f); ok {
			t.Fatal("completed with no signal sent")
		}
	}
	next.Cancel() // the stream stays bound: the binding is its listener's
	if err := rt.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := signalListeners(); got != before {
		t.Fatalf("listeners after Shutdown = %d, want %d", got, before)
	}
	var ws waker.Signal
	f := s.Next()
	r, ok := manualPoll(future.Future[future.Result[os.Signal]](f), &ws)
	if !ok || !errors.Is(r.Err, blitz.ErrSignalStreamClosed) || !errors.Is(r.Err, blitz.ErrShutdown) {
		t.Fatalf("Next after shutdown = %v, %v", r.Err, ok)
	}
	if r, ok := manualPoll(future.Future[future.Result[os.Signal]](once), &ws); !ok || !errors.Is(r.Err, blitz.ErrShutdown) {
		t.Fatalf("Signal after shutdown = %v, %v", r.Err, ok)
	}

	// A new stream is made without a runtime; BlockOn on the shut-down
	// runtime polls it once, binding it to a runtime already done.
	late, err := blitz.Signals(sigUSR1)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	r, ok = pollOn(t, rt.Handle(), late.Next())
	if !ok || !errors.Is(r.Err, blitz.ErrSignalStreamClosed) || !errors.Is(r.Err, blitz.ErrShutdown) {
		t.Fatalf("Next first polled on a shut-down runtime = %v, %v", r.Err, ok)
	}
	if got := signalListeners(); got != before {
		t.Fatalf("listeners after the late bind = %d, want %d", got, before)
	}
}

// TestSignalCaughtBeforeFirstPoll: the signals are caught from when the
// constructor returns, before any runtime exists or polls: a signal sent
// then is delivered at the first poll (and SIGUSR1 does not end the
// process, as it would uncaught).
func TestSignalCaughtBeforeFirstPoll(t *testing.T) {
	requireSignals(t)
	before := signalListeners()
	f := blitz.Signal(sigUSR1)
	s := mustSignals(t, sigUSR2)
	raise(t, sigUSR1)
	raise(t, sigUSR2)
	// The one-shot listener leaves the hub as the dispatcher delivers.
	pollUntil(t, "the one-shot listener has its signal", func() bool { return signalListeners() == before+1 })
	r, err := blitz.Run(testCtx(t), future.Future[future.Result[os.Signal]](f))
	if err != nil || r.Err != nil || r.Value != sigUSR1 {
		t.Fatalf("Run(Signal) = %v, %v, %v; want %v", r.Value, r.Err, err, sigUSR1)
	}
	rt := newRuntime(t, blitz.Config{Workers: 1})
	if sig, err := recvSignal(t, rt.Handle(), s); err != nil || sig != sigUSR2 {
		t.Fatalf("Next = %v, %v; want %v", sig, err, sigUSR2)
	}
}

// TestSignalUnpolledBelongsToNoRuntime: a listener no runtime polled, even
// one polled outside any runtime, is not closed by a runtime's shutdown;
// Cancel and Close release it.
func TestSignalUnpolledBelongsToNoRuntime(t *testing.T) {
	requireSignals(t)
	before := signalListeners()
	once := blitz.Signal(sigUSR1)
	s, err := blitz.Signals(sigUSR2)
	if err != nil {
		t.Fatal(err)
	}
	var ws waker.Signal
	next := s.Next()
	if _, ok := manualPoll(future.Future[future.Result[os.Signal]](next), &ws); ok {
		t.Fatal("Next completed with no signal sent")
	}
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := signalListeners(); got != before+2 {
		t.Fatalf("listeners after an unrelated Shutdown = %d, want %d", got, before+2)
	}
	// The stream still receives: the pending Next gets the signal.
	raise(t, sigUSR2)
	if !woken(&ws) {
		t.Fatal("the pending Next was not woken")
	}
	if r, ok := manualPoll(future.Future[future.Result[os.Signal]](next), &ws); !ok || r.Err != nil || r.Value != sigUSR2 {
		t.Fatalf("Next = %v, %v, %v; want %v", r.Value, r.Err, ok, sigUSR2)
	}
	if _, ok := manualPoll(future.Future[future.Result[os.Signal]](once), &ws); ok {
		t.Fatal("Signal completed with no signal sent")
	}
	once.Cancel()
	s.Close()
	if got := signalListeners(); got != before {
		t.Fatalf("listeners after Cancel and Close = %d, want %d", got, before)
	}
}

// TestSignalStreamBindsToFirstRuntime: a stream belongs to the first
// runtime that polls one of its Nexts and stays with it: another runtime
// polling it later does not take it, and the shutdown of the first closes
// it.
func TestSignalStreamBindsToFirstRuntime(t *testing.T) {
	requireSignals(t)
	first, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	second := newRuntime(t, blitz.Config{Workers: 1})
	s := mustSignals(t, sigUSR1)
	for _, rt := range []*blitz.Runtime{first, second} {
		f := s.Next()
		if _, ok := pollOn(t, rt.Handle(), f); ok {
			t.Fatal("Next completed with no signal sent")
		}
		f.Cancel()
	}
	// Polled on second, the stream still works and belongs to first.
	raise(t, sigUSR1)
	if sig, err := recvSignal(t, second.Handle(), s); err != nil || sig != sigUSR1 {
		t.Fatalf("Next on the second runtime = %v, %v; want %v", sig, err, sigUSR1)
	}
	before := signalListeners()
	if err := first.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := signalListeners(); got != before-1 {
		t.Fatalf("listeners after the first runtime's Shutdown = %d, want %d", got, before-1)
	}
	r, ok := pollOn(t, second.Handle(), s.Next())
	if !ok || !errors.Is(r.Err, blitz.ErrSignalStreamClosed) || !errors.Is(r.Err, blitz.ErrShutdown) {
		t.Fatalf("Next after the first runtime's Shutdown = %v, %v", r.Err, ok)
	}
}

func TestSignalDispatcherExitsWithLastListener(t *testing.T) {
	requireSignals(t)
	pollUntil(t, "no listener is left from earlier tests", func() bool { return signalListeners() == 0 })
	s, err := blitz.Signals(sigUSR1, sigUSR2)
	if err != nil {
		t.Fatal(err)
	}
	if !blitz.SignalDispatcherRunning() {
		t.Fatal("no dispatcher with a listener registered")
	}
	if _, sigs := blitz.SignalListeners(); sigs != 2 {
		t.Fatalf("os/signal channels = %d, want 2", sigs)
	}
	s.Close()
	if n, sigs := blitz.SignalListeners(); n != 0 || sigs != 0 {
		t.Fatalf("after Close: %d listeners, %d channels", n, sigs)
	}
	pollUntil(t, "the dispatcher exits", func() bool { return !blitz.SignalDispatcherRunning() })
}

func TestSignalManyPendingNextsEachSignalOnce(t *testing.T) {
	requireSignals(t)
	s := mustSignals(t, sigUSR1)
	var wa, wb waker.Signal
	a, b := s.Next(), s.Next()
	for _, p := range []struct {
		f  *blitz.SignalFuture
		ws *waker.Signal
	}{{a, &wa}, {b, &wb}} {
		if _, ok := manualPoll(future.Future[future.Result[os.Signal]](p.f), p.ws); ok {
			t.Fatal("Next completed with no signal sent")
		}
	}
	blitz.InjectSignal(sigUSR1)
	if !woken(&wa) || !woken(&wb) {
		t.Fatal("the pending Nexts were not woken")
	}
	ra, oka := manualPoll(future.Future[future.Result[os.Signal]](a), &wa)
	_, okb := manualPoll(future.Future[future.Result[os.Signal]](b), &wb)
	if !oka || ra.Value != sigUSR1 || okb {
		t.Fatalf("a = %v, %v; b ready = %v: want the one signal to go to a only", ra.Value, oka, okb)
	}
	b.Cancel()
}

// TestSignalStreamClosedWhenShutdownReturns: once Shutdown has returned,
// every stream the runtime polled is closed, so a Next polled at once is
// ready with the closed error; it used to be closed a little later, by the
// process's dispatcher goroutine. Many rounds, since the window was tens
// of microseconds.
func TestSignalStreamClosedWhenShutdownReturns(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 30
	}
	pending := 0
	for i := range rounds {
		rt, err := blitz.New(blitz.Config{Workers: 1, Backend: blitz.BackendNone})
		if err != nil {
			t.Fatal(err)
		}
		s, err := blitz.Signals(os.Interrupt)
		if err != nil {
			t.Fatal(err)
		}
		once := blitz.Signal(os.Interrupt) // polled once, by the runtime, before the shutdown
		next := s.Next()
		for _, f := range []*blitz.SignalFuture{next, once} {
			if _, ok := pollOn(t, rt.Handle(), f); ok {
				t.Fatalf("round %d: completed with no signal sent", i)
			}
		}
		next.Cancel()
		if err := rt.Shutdown(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		var ws waker.Signal
		f := s.Next()
		r, ok := manualPoll(future.Future[future.Result[os.Signal]](f), &ws)
		r2, ok2 := manualPoll(future.Future[future.Result[os.Signal]](once), &ws)
		if !ok || !ok2 {
			pending++
			f.Cancel()
			once.Cancel()
		} else {
			if !errors.Is(r.Err, blitz.ErrSignalStreamClosed) || !errors.Is(r.Err, blitz.ErrShutdown) {
				t.Fatalf("round %d: Next after Shutdown = %v", i, r.Err)
			}
			if !errors.Is(r2.Err, blitz.ErrShutdown) {
				t.Fatalf("round %d: Signal after Shutdown = %v", i, r2.Err)
			}
		}
		s.Close()
	}
	if pending > 0 {
		t.Fatalf("%d of %d streams were still open right after Shutdown returned", pending, rounds)
	}
	pollUntil(t, "the dispatcher exits", func() bool { return !blitz.SignalDispatcherRunning() })
}
