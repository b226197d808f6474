package equiv

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// TestOpenDefersDoNotAllocate: the open-coded defer statements of closeAll
// (a pointer method of a parameter, a promoted method, an interface's
// method) allocate nothing: a run of closeAll allocates what a run of
// closeNone does, whether it returns or is cancelled with its calls due,
// and the calls ran.
func TestOpenDefersDoNotAllocate(t *testing.T) {
	c, w, other := &closer{}, &wrappedCloser{}, &closer{}
	const runs = 50
	// One Blocker for every run, rather than future.Block's pooled ones:
	// under the race detector, sync.Pool drops some of what it is given,
	// and a run that found the pool empty would count one Blocker more.
	b := future.GetBlocker()
	defer b.Put()
	block := func(f future.Future[int]) {
		for {
			if _, ok := f.Poll(b.Context()); ok {
				return
			}
			if err := b.Signal().Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	none := testing.AllocsPerRun(runs, func() { block(closeNoneAsync(NewEnv(1), c, w, other)) })
	all := testing.AllocsPerRun(runs, func() { block(closeAllAsync(NewEnv(1), c, w, other)) })
	t.Logf("allocations per returning run: closeNone %.0f, closeAll %.0f", none, all)
	if all > none {
		t.Errorf("closeAll allocates %.0f times per run, closeNone %.0f: its defer statements allocate", all, none)
	}
	if want := runs + 1; c.closed != want || w.closed != want || other.closed != want {
		t.Fatalf("closed %d, %d, %d times; want %d each", c.closed, w.closed, other.closed, want)
	}

	cx := future.NewContext(waker.Noop())
	cancelled := func(f future.Future[int]) {
		if _, ready := f.Poll(cx); ready {
			t.Fatal("ready at the first poll: the calls are not due at the cancel")
		}
		future.Cancel(f)
	}
	seed := uint64(0) // one whose first future is pending at the first poll
	for NewEnv(seed).rng.IntN(3) == 0 {
		seed++
	}
	none = testing.AllocsPerRun(runs, func() { cancelled(closeNoneAsync(NewEnv(seed), c, w, other)) })
	all = testing.AllocsPerRun(runs, func() { cancelled(closeAllAsync(NewEnv(seed), c, w, other)) })
	t.Logf("allocations per cancelled run: closeNone %.0f, closeAll %.0f", none, all)
	if all > none {
		t.Errorf("a cancelled closeAll allocates %.0f times, closeNone %.0f: its defer statements allocate", all, none)
	}
	if want := 2 * (runs + 1); c.closed != want || w.closed != want || other.closed != want {
		t.Fatalf("closed %d, %d, %d times; want %d each", c.closed, w.closed, other.closed, want)
	}
}
