package parallel_test

import (
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/parallel"
)

// floorDeque is the part of a one-item Chase-Lev deque that a join touches
// when b is not stolen: the slot b is published in and the two indices.
type floorDeque struct {
	slot   atomic.Pointer[int]
	bottom atomic.Int64
	top    atomic.Int64
}

// floorJoin is what an inline Join cannot do without in Go, and nothing
// more: one call level with a deferred function that recovers a panic (Go
// has no other way to catch one), the deque's three atomic writes (the
// pointer to b and bottom, each a sequentially consistent store, an XCHG
// on amd64, as sync/atomic has no release store; the CAS on top that takes
// the last item back), and the two indirect calls of a and b, which Go
// cannot inline. No frame stack, no sleep protocol, no Goexit handling, no
// counting.
//
//go:noinline
func floorJoin(q *floorDeque, x *int, a, b func(*parallel.Ctx)) (pe any) {
	done := false
	defer func() {
		if !done {
			pe = recover()
		}
	}()
	t := q.top.Load()
	q.slot.Store(x)
	q.bottom.Store(t + 1)
	a(nil)
	if q.top.CompareAndSwap(t, t+1) {
		b(nil)
	}
	done = true
	return nil
}

// BenchmarkJoinFloor runs floorJoin with BenchmarkJoinInline's no-op
// functions: the floor that BenchmarkJoinInline is compared with in
// BENCHMARKS.md. It allocates nothing.
func BenchmarkJoinFloor(b *testing.B) {
	var q floorDeque
	x := new(int)
	noop := func(*parallel.Ctx) {}
	b.ReportAllocs()
	for range b.N {
		if pe := floorJoin(&q, x, noop, noop); pe != nil {
			b.Fatal(pe)
		}
	}
}
