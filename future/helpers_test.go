package future_test

import (
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// countWaker is a test task's Waker target: it counts wakes.
type countWaker struct{ n atomic.Int32 }

func (c *countWaker) Wake() { c.n.Add(1) }

// newCx returns a Context outside any executor whose Waker counts wakes.
func newCx() (*future.Context, *countWaker) {
	cw := &countWaker{}
	return future.NewContext(waker.New(cw)), cw
}

// probes returns n pending probes registering in reg.
func probes(reg *future.Registry, n int) []*future.Probe[int] {
	ps := make([]*future.Probe[int], n)
	for i := range ps {
		ps[i] = future.NewProbe[int](reg)
	}
	return ps
}

// asFutures converts probes to the futures the combinators take.
func asFutures[T any](ps []*future.Probe[T]) []future.Future[T] {
	fs := make([]future.Future[T], len(ps))
	for i, p := range ps {
		fs[i] = p
	}
	return fs
}

// cancels returns each probe's Cancel count.
func cancels[T any](ps []*future.Probe[T]) []int {
	n := make([]int, len(ps))
	for i, p := range ps {
		n[i] = p.Stats().Cancels
	}
	return n
}

// polls returns each probe's Poll count.
func polls[T any](ps []*future.Probe[T]) []int {
	n := make([]int, len(ps))
	for i, p := range ps {
		n[i] = p.Stats().Polls
	}
	return n
}
