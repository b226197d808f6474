package blitz_test

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// square is a small future held by value: SpawnValue copies it into the
// task, which is then one allocation.
type square struct{ n int }

func (s *square) Poll(*future.Context) (int, bool) { return s.n * s.n, true }

// sumSquares spawns one square task per number, by value, and adds up
// their results.
type sumSquares struct {
	ns      []int
	handles []blitz.JoinHandle[int]
	sum     int
}

func (f *sumSquares) Poll(cx *future.Context) (int, bool) {
	if f.handles == nil {
		for _, n := range f.ns {
			f.handles = append(f.handles, blitz.SpawnValue[int](cx, square{n: n}))
		}
	}
	for len(f.handles) > 0 {
		r, ok := f.handles[0].Poll(cx)
		if !ok {
			return 0, false
		}
		f.sum += r.Value
		f.handles = f.handles[1:]
	}
	return f.sum, true
}

// Spawning futures held by value: from outside the runtime with
// SpawnValueOn, and from inside a task with SpawnValue. T, the value type,
// is given; the future's type is inferred.
func ExampleSpawnValue() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	h := blitz.SpawnValueOn[int](rt.Handle(), sumSquares{ns: []int{1, 2, 3}})
	sum, err := h.Wait(context.Background())
	fmt.Println(sum, err)
	// Output: 14 <nil>
}

// relay passes a count down a chain of detached tasks: each link spawns
// the next without a JoinHandle, and the last one reports on a channel.
// The workers reuse the memory of finished links.
type relay struct {
	left int
	out  chan<- string
}

func (r *relay) Poll(cx *future.Context) (struct{}, bool) {
	if r.left == 0 {
		r.out <- "relay done"
	} else {
		blitz.SpawnValueDetached[struct{}](cx, relay{left: r.left - 1, out: r.out})
	}
	return struct{}{}, true
}

// Spawning tasks that nobody joins, by value and without a handle.
func ExampleSpawnValueDetached() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	out := make(chan string, 1)
	blitz.SpawnValueDetachedOn[struct{}](rt.Handle(), relay{left: 1000, out: out})
	fmt.Println(<-out)
	// Output: relay done
}
