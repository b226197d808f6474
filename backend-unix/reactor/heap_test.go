//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// The timer heap against a sorted model: pushes, removals from the middle
// (cancels) and pops of the minimum keep order and every op's index.
func TestTimerHeapModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var h timerHeap
	var model []int64
	live := map[*backend.Op]int64{}
	for i := 0; i < 20000; i++ {
		switch k := rng.Intn(3); {
		case k == 0 || len(h) == 0:
			op := &backend.Op{}
			op.Internal.State = stateInFlight
			w := rng.Int63n(1000)
			h.push(op, w)
			live[op] = w
			model = append(model, w)
		case k == 1:
			op := h[rng.Intn(len(h))].op
			w := live[op]
			if got := h.remove(heapIndex(op)); got != op || heapIndex(op) != -1 || !inFlight(op) {
				t.Fatal("remove by index lost the op or its state")
			}
			delete(live, op)
			model = slices.Delete(model, slices.Index(model, w), slices.Index(model, w)+1)
		default:
			slices.Sort(model)
			if h[0].when != model[0] {
				t.Fatalf("min %d, model %d", h[0].when, model[0])
			}
			op := h.remove(0)
			delete(live, op)
			model = model[1:]
		}
		for j, e := range h {
			if heapIndex(e.op) != j {
				t.Fatalf("op at %d thinks it is at %d", j, heapIndex(e.op))
			}
		}
	}
}

// The ready ring keeps order across growth and clears popped slots.
func TestRing(t *testing.T) {
	var r ring
	out := make([]backend.Completion, 7)
	next, want := 0, 0
	for round := 0; round < 50; round++ {
		for i := 0; i < round*3; i++ {
			r.push(backend.Completion{N: next})
			next++
		}
		n := r.pop(out)
		for _, c := range out[:n] {
			if c.N != want {
				t.Fatalf("got %d want %d", c.N, want)
			}
			want++
		}
	}
	for r.n > 0 {
		n := r.pop(out)
		for _, c := range out[:n] {
			if c.N != want {
				t.Fatalf("got %d want %d", c.N, want)
			}
			want++
		}
	}
	for _, c := range r.buf {
		if c.N != 0 || c.Op != nil {
			t.Fatal("popped slot not cleared")
		}
	}
}
