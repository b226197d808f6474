package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// mustGuard takes a guard or fails the test.
func mustGuard(t testing.TB, c *blitz.Coordinator, name string) *blitz.Guard {
	t.Helper()
	g, err := c.Guard(name)
	if err != nil {
		t.Fatalf("Guard(%q): %v", name, err)
	}
	return g
}

// releaseAfter is a task that sleeps, then releases its guard.
func releaseAfter(d time.Duration, g *blitz.Guard) future.Future[struct{}] {
	return future.Map(blitz.Sleep(d), func(struct{}) struct{} {
		g.Release()
		return struct{}{}
	})
}

func TestShutdownWaitsForWorkInFlight(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	c := blitz.NewCoordinator()
	start := time.Now()
	for i := range 5 {
		g := mustGuard(t, c, fmt.Sprintf("task-%d", i))
		blitz.SpawnOn(rt.Handle(), releaseAfter(time.Duration(i+1)*5*time.Millisecond, g)).Detach()
	}
	c.Trigger()
	rep, err := c.Wait(testCtx(t))
	if err != nil || len(rep.Held) != 0 || !rep.Triggered {
		t.Fatalf("Wait = %+v, %v; want an empty report", rep, err)
	}
	// Wait returned after the last release, which follows the longest
	// sleep (a sleep never ends early).
	if el := time.Since(start); el < 25*time.Millisecond {
		t.Fatalf("Wait returned after %v, before the last task's 25ms sleep ended", el)
	}
	if c.Held() != 0 {
		t.Fatalf("Held = %d after Wait", c.Held())
	}
}

func TestShutdownTimeoutReportsStuckGuard(t *testing.T) {
	c := blitz.NewCoordinator()
	stuck := mustGuard(t, c, "stuck")
	quick := mustGuard(t, c, "quick")
	quick.Release()
	quick.Release() // idempotent
	c.Trigger()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	rep, err := c.Wait(ctx)
	if !errors.Is(err, blitz.ErrShutdownTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait error = %v, want ErrShutdownTimeout and DeadlineExceeded", err)
	}
	if !slices.Equal(rep.Held, []string{"stuck"}) || !rep.Triggered {
		t.Fatalf("report = %+v, want stuck held", rep)
	}
	stuck.Release()
	if rep, err := c.Wait(testCtx(t)); err != nil || len(rep.Held) != 0 {
		t.Fatalf("Wait after the release = %+v, %v", rep, err)
	}
}

func TestShutdownWaitBeforeTriggerTimesOut(t *testing.T) {
	var c blitz.Coordinator // the zero Coordinator is valid
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("gave up")
	cancel(cause)
	rep, err := c.Wait(ctx)
	if !errors.Is(err, blitz.ErrShutdownTimeout) || !errors.Is(err, cause) || rep.Triggered {
		t.Fatalf("Wait untriggered = %+v, %v", rep, err)
	}
}

func TestShutdownGuardAfterTriggerRefused(t *testing.T) {
	c := blitz.NewCoordinator()
	done := c.Done()
	select {
	case <-done:
		t.Fatal("Done closed before Trigger")
	default:
	}
	c.Trigger()
	c.Trigger() // idempotent
	<-done
	<-c.Done()
	if !c.Triggered() {
		t.Fatal("Triggered = false after Trigger")
	}
	g, err := c.Guard("late")
	if g != nil || !errors.Is(err, blitz.ErrShuttingDown) {
		t.Fatalf("Guard after Trigger = %v, %v; want ErrShuttingDown", g, err)
	}
}

func TestShutdownTriggerOnSignal(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	before := signalListeners()
	c := blitz.NewCoordinator()
	if err := c.TriggerOnSignal(rt.Handle(), sigUSR2, sigUSR1); err != nil {
		t.Fatal(err)
	}
	g := mustGuard(t, c, "request")
	raise(t, sigUSR2)
	select {
	case <-c.Done():
	case <-testCtx(t).Done():
		t.Fatal("SIGUSR2 did not trigger the coordinator")
	}
	if _, err := c.Guard("late"); !errors.Is(err, blitz.ErrShuttingDown) {
		t.Fatalf("Guard after the signal = %v", err)
	}
	g.Release()
	if rep, err := c.Wait(testCtx(t)); err != nil || len(rep.Held) != 0 {
		t.Fatalf("Wait = %+v, %v", rep, err)
	}
	pollUntil(t, "the signal listener leaves", func() bool { return signalListeners() == before })
}

func TestShutdownTriggerOnSignalStopsListeningOnTrigger(t *testing.T) {
	requireSignals(t)
	rt := newRuntime(t, blitz.Config{Workers: 2})
	before := signalListeners()
	c := blitz.NewCoordinator()
	if err := c.TriggerOnSignal(rt.Handle(), sigUSR1); err != nil {
		t.Fatal(err)
	}
	if got := signalListeners(); got != before+1 {
		t.Fatalf("listeners = %d, want %d", got, before+1)
	}
	c.Trigger()
	pollUntil(t, "the signal listener leaves", func() bool { return signalListeners() == before })
	if err := c.TriggerOnSignal(rt.Handle()); !errors.Is(err, blitz.ErrNoSignals) {
		t.Fatalf("TriggerOnSignal() = %v, want ErrNoSignals", err)
	}
}

func TestShutdownDrainedFromTask(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	c := blitz.NewCoordinator()
	g := mustGuard(t, c, "conn")
	// The task waits for the trigger, then for the drain.
	tf, df := c.WhenTriggered(), c.Drained(10*time.Second)
	jh := blitz.SpawnOn(rt.Handle(), future.Then(future.Future[struct{}](tf),
		func(struct{}) future.Future[future.Result[blitz.Report]] { return df }))
	c.Trigger()
	rt2 := newRuntime(t, blitz.Config{Workers: 1})
	blitz.SpawnOn(rt2.Handle(), releaseAfter(5*time.Millisecond, g)).Detach()
	r, err := jh.Wait(testCtx(t))
	if err != nil || r.Err != nil || len(r.Value.Held) != 0 || !r.Value.Triggered {
		t.Fatalf("Drained = %+v, %v, %v", r.Value, r.Err, err)
	}
}

func TestShutdownDrainedTimesOutFromTask(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	c := blitz.NewCoordinator()
	g := mustGuard(t, c, "stuck-conn")
	defer g.Release()
	c.Trigger()
	df := c.Drained(20 * time.Millisecond)
	jh := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[blitz.Report]](df))
	r, err := jh.Wait(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(r.Err, blitz.ErrShutdownTimeout) || !errors.Is(r.Err, blitz.ErrTimeout) {
		t.Fatalf("Drained error = %v, want ErrShutdownTimeout and ErrTimeout", r.Err)
	}
	if !slices.Equal(r.Value.Held, []string{"stuck-conn"}) {
		t.Fatalf("report = %+v", r.Value)
	}
}

func TestShutdownFuturesCancelLeaveNoWaiter(t *testing.T) {
	c := blitz.NewCoordinator()
	g := mustGuard(t, c, "w")
	var ws waker.Signal
	tf := c.WhenTriggered()
	df := c.Drained(time.Hour)
	if _, ok := manualPoll(future.Future[struct{}](tf), &ws); ok {
		t.Fatal("WhenTriggered completed before Trigger")
	}
	if _, ok := manualPoll(future.Future[future.Result[blitz.Report]](df), &ws); ok {
		t.Fatal("Drained completed before Trigger")
	}
	tf.Cancel()
	df.Cancel()
	df.Cancel()
	// The cancelled futures are not woken: Trigger and the release find
	// no waiter.
	c.Trigger()
	g.Release()
	if ws.TryWait() {
		t.Fatal("a cancelled future was woken")
	}
	// A pending pair is woken by Trigger and the last release.
	c2 := blitz.NewCoordinator()
	g2 := mustGuard(t, c2, "w")
	tf2, df2 := c2.WhenTriggered(), c2.Drained(0)
	var wt, wd waker.Signal
	manualPoll(future.Future[struct{}](tf2), &wt)
	manualPoll(future.Future[future.Result[blitz.Report]](df2), &wd)
	c2.Trigger()
	if !woken(&wt) {
		t.Fatal("Trigger did not wake WhenTriggered")
	}
	if _, ok := manualPoll(future.Future[struct{}](tf2), &wt); !ok {
		t.Fatal("WhenTriggered pending after Trigger")
	}
	if _, ok := manualPoll(future.Future[future.Result[blitz.Report]](df2), &wd); ok {
		t.Fatal("Drained completed with a guard held")
	}
	g2.Release()
	if !woken(&wd) {
		t.Fatal("the last Release did not wake Drained")
	}
	if r, ok := manualPoll(future.Future[future.Result[blitz.Report]](df2), &wd); !ok || r.Err != nil {
		t.Fatalf("Drained = %+v, %v", r, ok)
	}
}

// TestShutdownStressEveryAcceptedGuardWaitedFor races guard takers and
// releasers against Trigger: Wait returns only after every guard accepted
// was released, and no guard is accepted once Triggered reports true.
func TestShutdownStressEveryAcceptedGuardWaitedFor(t *testing.T) {
	rounds, workers := 50, 8
	if testing.Short() {
		rounds = 5
	}
	for range rounds {
		c := blitz.NewCoordinator()
		var accepted, released, lateAccepts atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					wasTriggered := c.Triggered()
					g, err := c.Guard(fmt.Sprintf("w%d-%d", w, i))
					if err != nil {
						if !errors.Is(err, blitz.ErrShuttingDown) {
							t.Errorf("Guard: %v", err)
						}
						return
					}
					if wasTriggered {
						lateAccepts.Add(1)
					}
					accepted.Add(1)
					if i%3 == 0 {
						for range 50 { // a little work while holding it
							_ = c.Held()
						}
					}
					released.Add(1)
					g.Release()
				}
			}()
		}
		pollUntil(t, "guards are being taken", func() bool { return accepted.Load() >= int64(workers) })
		c.Trigger()
		rep, err := c.Wait(testCtx(t))
		// Wait returned: every accepted guard was released, so its
		// released count (taken before Release) is in.
		if a, r := accepted.Load(), released.Load(); err != nil || len(rep.Held) != 0 || a != r {
			t.Fatalf("Wait = %+v, %v with %d accepted, %d released", rep, err, a, r)
		}
		wg.Wait()
		if n := lateAccepts.Load(); n != 0 {
			t.Fatalf("%d guards accepted after Triggered reported true", n)
		}
		if a, r := accepted.Load(), released.Load(); a != r {
			t.Fatalf("%d accepted, %d released", a, r)
		}
	}
}
