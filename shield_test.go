package blitz_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// steps is a task's body written by hand: it awaits each step in order,
// calling after[i] when step i completes, then stays pending; a cancel
// cancels the step in progress. reached counts the completed steps.
type steps struct {
	list    []future.Future[struct{}]
	i       int
	reached atomic.Int32
}

func (s *steps) Poll(cx *future.Context) (struct{}, bool) {
	for s.i < len(s.list) {
		if _, ok := s.list[s.i].Poll(cx); !ok {
			return struct{}{}, false
		}
		s.i++
		s.reached.Add(1)
	}
	return struct{}{}, true
}

func (s *steps) Cancel() {
	if s.i < len(s.list) {
		future.Cancel(s.list[s.i])
	}
}

func newSteps(list ...future.Future[struct{}]) *steps { return &steps{list: list} }

// markPolled returns f, which sets *polled at its first poll.
func markPolled[T any](f future.Future[T], polled *atomic.Bool) future.Future[T] {
	return future.PollFn(func(cx *future.Context) (T, bool) {
		polled.Store(true)
		return f.Poll(cx)
	})
}

// waitPolled waits until *b is true.
func waitPolled(t *testing.T, b *atomic.Bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !b.Load() {
		if time.Now().After(deadline) {
			t.Fatal("never polled")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestShieldDefersCancel: a cancel requested while the task is in a shield
// takes effect when the shielded future completes, at the task's next
// suspension: the section runs to its end, the step after it is never
// reached.
func TestShieldDefersCancel(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	const section = 80 * time.Millisecond
	var shielded atomic.Bool
	body := newSteps(
		blitz.Shield(markPolled(blitz.Sleep(section), &shielded)),
		future.Pending[struct{}](), // cut here
	)
	h := blitz.SpawnOn(rt.Handle(), future.Future[struct{}](body))
	waitPolled(t, &shielded)
	start := time.Now()
	h.Cancel()
	_, err := h.Wait(context.Background())
	if !errors.Is(err, blitz.ErrCancelled) {
		t.Fatalf("Wait: %v; want ErrCancelled", err)
	}
	if body.reached.Load() != 1 {
		t.Fatalf("%d steps completed; want the shielded one only", body.reached.Load())
	}
	if waited := time.Since(start); waited < section/2 {
		t.Fatalf("the cancel took effect after %v, inside the %v section", waited, section)
	}
}

// TestShieldNested: with shields nested and in sequence, a cancel takes
// effect only when the outermost one ends.
func TestShieldNested(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	var shielded atomic.Bool
	inner := newSteps(blitz.Shield(markPolled(blitz.Sleep(20*time.Millisecond), &shielded)), blitz.Sleep(40*time.Millisecond))
	body := newSteps(
		blitz.Shield(future.Future[struct{}](inner)), // the inner shield ends before the outer one
		future.Pending[struct{}](),
	)
	h := blitz.SpawnOn(rt.Handle(), future.Future[struct{}](body))
	waitPolled(t, &shielded)
	h.Cancel()
	if _, err := h.Wait(context.Background()); !errors.Is(err, blitz.ErrCancelled) {
		t.Fatalf("Wait: %v; want ErrCancelled", err)
	}
	if inner.reached.Load() != 2 || body.reached.Load() != 1 {
		t.Fatalf("inner steps %d, outer %d; want 2 and 1", inner.reached.Load(), body.reached.Load())
	}
}

// TestShieldWithoutCancel: a shield changes nothing for a task nobody
// cancels, and a task cancelled after its shield ended stops at once.
func TestShieldWithoutCancel(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	v, err := blitz.SpawnOn(rt.Handle(), future.Future[int](blitz.Shield(future.Map(blitz.Sleep(time.Millisecond), func(struct{}) int { return 7 })))).Wait(context.Background())
	if err != nil || v != 7 {
		t.Fatalf("shielded task: %d, %v; want 7", v, err)
	}
	body := newSteps(blitz.Shield(future.Ready(struct{}{})), future.Pending[struct{}]())
	cancelAfterFirstStep(t, rt, body)
}

// TestShieldDroppedByItsOwner: a Timeout that drops the shielded future
// cancels it (a shield guards against the task's cancel only) and gives
// the shield up: the task's cancel then takes effect at once.
func TestShieldDroppedByItsOwner(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	timedOut := future.Map(blitz.Timeout(10*time.Millisecond, blitz.Shield(future.Pending[struct{}]())), func(r future.Result[struct{}]) struct{} {
		if !errors.Is(r.Err, blitz.ErrTimeout) {
			t.Errorf("Timeout: %v; want ErrTimeout", r.Err)
		}
		return struct{}{}
	})
	body := newSteps(timedOut, future.Pending[struct{}]())
	cancelAfterFirstStep(t, rt, body)
}

// cancelAfterFirstStep spawns body, cancels it once its first step is
// done (no shield in force any more) and checks that the cancel takes
// effect at once.
func cancelAfterFirstStep(t *testing.T, rt *blitz.Runtime, body *steps) {
	t.Helper()
	h := blitz.SpawnOn(rt.Handle(), future.Future[struct{}](body))
	for body.reached.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	h.Cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.Wait(ctx); !errors.Is(err, blitz.ErrCancelled) {
		t.Fatalf("Wait: %v; want ErrCancelled at once", err)
	}
}

// TestShieldOutsideATask: on BlockOn's goroutine a shield protects
// nothing and only polls its future.
func TestShieldOutsideATask(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	v, err := blitz.BlockOn(context.Background(), rt.Handle(), blitz.Shield(future.Ready(3)))
	if v != 3 || err != nil {
		t.Fatalf("BlockOn: %d, %v; want 3", v, err)
	}
}

// TestShieldTooDeep: nesting past 255 fails the task with ErrShieldDepth
// (a panic, as any misuse inside a task), and the runtime goes on.
func TestShieldTooDeep(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	var f future.Future[struct{}] = blitz.Sleep(time.Hour)
	for range 256 {
		f = blitz.Shield(f)
	}
	_, err := blitz.SpawnOn(rt.Handle(), f).Wait(context.Background())
	if !errors.Is(err, blitz.ErrPanicked) || !errors.Is(err, blitz.ErrShieldDepth) {
		t.Fatalf("Wait: %v; want a panic with ErrShieldDepth", err)
	}
}

// TestShutdownHonoursShields: Shutdown cancels a shielded task and runs
// the runtime on, its timers included, until the shield ends; the task
// ends cancelled and nothing is cut.
func TestShutdownHonoursShields(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var shielded, otherPolled atomic.Bool
	body := newSteps(
		blitz.Shield(markPolled(future.Future[struct{}](newSteps(blitz.Sleep(30*time.Millisecond), blitz.Sleep(30*time.Millisecond))), &shielded)),
		future.Pending[struct{}](),
	)
	h := blitz.SpawnOn(rt.Handle(), future.Future[struct{}](body))
	other := blitz.SpawnOn(rt.Handle(), markPolled(future.Pending[struct{}](), &otherPolled))
	waitPolled(t, &shielded)
	waitPolled(t, &otherPolled)
	shutdownHonours(t, rt, h, body)
	if _, err := other.Wait(context.Background()); !errors.Is(err, blitz.ErrShutdown) {
		t.Fatalf("other task: %v; want ErrShutdown", err)
	}
}

// shutdownHonours shuts rt down and checks that it let the shielded
// section of task h (body's first step) finish, ended h cancelled, and
// cut no shield.
func shutdownHonours(t *testing.T, rt *blitz.Runtime, h blitz.JoinHandle[struct{}], body *steps) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if body.reached.Load() != 1 {
		t.Fatalf("%d steps completed; want the shielded section", body.reached.Load())
	}
	if _, err := h.Wait(ctx); !errors.Is(err, blitz.ErrCancelled) {
		t.Fatalf("shielded task: %v; want ErrCancelled", err)
	}
	if n := rt.Stats().ShieldsCut; n != 0 {
		t.Fatalf("ShieldsCut %d; want 0", n)
	}
}

// TestShutdownDuringAFirstPollHonoursItsShield: a task takes a shield in
// its first poll, and Shutdown starts before that poll returns; the
// shutdown still finds the shield and lets the section finish.
func TestShutdownDuringAFirstPollHonoursItsShield(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var inside atomic.Bool
	sleep := blitz.Sleep(20 * time.Millisecond)
	section := future.PollFn(func(cx *future.Context) (struct{}, bool) {
		if !inside.Swap(true) {
			time.Sleep(50 * time.Millisecond) // the shutdown starts meanwhile
		}
		return sleep.Poll(cx)
	})
	body := newSteps(blitz.Shield(section), future.Pending[struct{}]())
	h := blitz.SpawnOn(rt.Handle(), future.Future[struct{}](body))
	waitPolled(t, &inside)
	shutdownHonours(t, rt, h, body)
}

// TestShutdownCutsShieldsAtItsDeadline: a shield longer than Shutdown's
// context is cut when the context ends, reported in the error and in
// Stats; a later Shutdown finishes.
func TestShutdownCutsShieldsAtItsDeadline(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var shielded atomic.Bool
	h := blitz.SpawnOn(rt.Handle(), future.Future[struct{}](blitz.Shield(markPolled(blitz.Sleep(time.Hour), &shielded))))
	waitPolled(t, &shielded)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = rt.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 shielded task(s) cut") {
		t.Fatalf("Shutdown: %v; want the deadline and one shielded task cut", err)
	}
	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	// Once the shutdown has finished, a call with an ended ctx still hears
	// of the cut (the first call may find the shutdown finished before it
	// sees its ctx end: it must answer the same).
	if err := rt.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 shielded task(s) cut") {
		t.Fatalf("Shutdown after the end, ctx ended: %v; want the deadline and one shielded task cut", err)
	}
	if _, err := h.Wait(context.Background()); !errors.Is(err, blitz.ErrShutdown) {
		t.Fatalf("shielded task: %v; want ErrShutdown", err)
	}
	if n := rt.Stats().ShieldsCut; n != 1 {
		t.Fatalf("ShieldsCut %d; want 1", n)
	}
}

// TestShieldJoinSetCancelAllAndClose: a JoinSet's CancelAll and Close, like
// JoinHandle.Cancel, take effect in a shielded task when its section ends;
// the unshielded task beside it is cancelled at once.
func TestShieldJoinSetCancelAllAndClose(t *testing.T) {
	for _, how := range []string{"CancelAll", "Close"} {
		t.Run(how, func(t *testing.T) {
			rt := newRuntime(t, blitz.Config{Workers: 2})
			const section = 60 * time.Millisecond
			var shielded, plainPolled atomic.Bool
			body := newSteps(blitz.Shield(markPolled(blitz.Sleep(section), &shielded)), future.Pending[struct{}]())
			var set blitz.JoinSet[struct{}]
			set.SpawnOn(rt.Handle(), future.Future[struct{}](body))
			set.SpawnOn(rt.Handle(), markPolled(future.Pending[struct{}](), &plainPolled))
			waitPolled(t, &shielded)
			waitPolled(t, &plainPolled)
			if how == "Close" {
				set.Close()
			} else {
				set.CancelAll()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			results, err := set.WaitAll(ctx)
			if err != nil {
				t.Fatalf("WaitAll: %v", err)
			}
			if len(results) != 2 {
				t.Fatalf("%d outcomes; want 2", len(results))
			}
			for _, r := range results {
				if !errors.Is(r.Err, blitz.ErrCancelled) {
					t.Fatalf("outcome %v; want ErrCancelled", r.Err)
				}
			}
			if body.reached.Load() != 1 {
				t.Fatalf("%d steps completed; want the shielded section", body.reached.Load())
			}
		})
	}
}
