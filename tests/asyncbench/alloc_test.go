package asyncbench

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
	"github.com/blitz-go/blitz/waker"
)

// TestGeneratedAwaitOfLocalDoesNotAllocate: awaiting a local value future
// through its address (lf := Later(i); future.Await(&lf)) allocates nothing
// per await in the generated code; what a run allocates (the state machine,
// future.Block's own) does not grow with the number of awaits.
func TestGeneratedAwaitOfLocalDoesNotAllocate(t *testing.T) {
	const k = 1000
	run := func(f future.Future[int]) {
		got, err := future.Block(context.Background(), f)
		if want := k * (k - 1) / 2; err != nil || got != want {
			t.Fatalf("got %d, %v; want %d", got, err, want)
		}
	}
	perRun := testing.AllocsPerRun(3, func() { run(awaitLoopAsync(k)) })
	hand := testing.AllocsPerRun(3, func() { run(newAwaitLoopFuture(k)) })
	t.Logf("allocations per run of %d awaits: generated %.0f, hand-written %.0f", k, perRun, hand)
	if perRun > hand+k/10 {
		t.Fatalf("the generated loop allocates %.0f times per run of %d awaits, the hand-written one %.0f: about one per await", perRun, k, hand)
	}
}

// TestGeneratedDeferDoesNotAllocate: a deferred Close of a parameter
// (handleClosing is handle with defer c.Close()) allocates nothing: a run of
// handleClosing allocates what a run of handle does, whether it returns or
// is cancelled with the Close pending.
func TestGeneratedDeferDoesNotAllocate(t *testing.T) {
	script := []int{2, 3, -1}
	// One Blocker for every run, rather than future.Block's pooled ones:
	// under the race detector, sync.Pool drops some of what it is given,
	// and a run that found the pool empty would count one Blocker more.
	b := future.GetBlocker()
	defer b.Put()
	run := func(f future.Future[future.Result[int]]) {
		for {
			if _, ok := f.Poll(b.Context()); ok {
				return
			}
			if err := b.Signal().Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	plain := testing.AllocsPerRun(20, func() { run(handleAsync(NewConn(script...), NewGate())) })
	closing := testing.AllocsPerRun(20, func() { run(handleClosingAsync(NewConn(script...), NewGate())) })
	t.Logf("allocations per returning run: handle %.0f, handleClosing %.0f", plain, closing)
	if closing > plain {
		t.Errorf("handleClosing allocates %.0f times per run, handle %.0f: the deferred Close allocates", closing, plain)
	}
	// Cancelled after its first poll, with the Close pending.
	cx := future.NewContext(waker.Noop())
	cancelled := func(f future.Future[future.Result[int]]) {
		if _, ready := f.Poll(cx); ready {
			t.Fatal("ready at the first poll")
		}
		future.Cancel(f)
	}
	plain = testing.AllocsPerRun(20, func() { cancelled(handleAsync(NewConn(script...), NewGate())) })
	closing = testing.AllocsPerRun(20, func() {
		c := NewConn(script...)
		cancelled(handleClosingAsync(c, NewGate()))
		if !c.Closed {
			t.Fatal("cancelled without its deferred Close")
		}
	})
	t.Logf("allocations per cancelled run: handle %.0f, handleClosing %.0f", plain, closing)
	if closing > plain {
		t.Errorf("a cancelled handleClosing allocates %.0f times, handle %.0f: the deferred Close allocates", closing, plain)
	}
}

// TestGeneratedAwaitOfMovableDoesNotAllocate: awaiting a channel's send and
// receive and a mutex's lock written as calls (future.Try(c.Recv())), whose
// pointers the generated code copies into its fields, allocates nothing per
// await: a run of 1000 iterations allocates what a run of 10 does.
func TestGeneratedAwaitOfMovableDoesNotAllocate(t *testing.T) {
	run := func(k int) float64 {
		c := channels.NewBounded[int](1)
		var mu syncprim.Mutex
		return testing.AllocsPerRun(3, func() {
			r, err := future.Block(context.Background(), relayAsync(c, &mu, k))
			got := r.Value
			if err == nil {
				err = r.Err
			}
			if want := k * (k - 1) / 2; err != nil || got != want {
				t.Fatalf("got %d, %v; want %d", got, err, want)
			}
		})
	}
	small, large := run(10), run(1000)
	t.Logf("allocations per run: 10 iterations %.0f, 1000 iterations %.0f", small, large)
	if large > small+10 {
		t.Fatalf("a run of 1000 iterations allocates %.0f times, one of 10 %.0f: the awaits allocate", large, small)
	}
}
