package asyncbench

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
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
