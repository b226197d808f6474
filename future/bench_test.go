package future_test

import (
	"strconv"
	"testing"

	"github.com/blitz-go/blitz/future"
)

// always is a future that is ready on every poll. Unlike Ready it may be
// polled again, so the benchmarks make it once and measure only the
// combinator: its construction, one Poll, and what it allocates.
type always struct{ v int }

func (a *always) Poll(*future.Context) (int, bool) { return a.v, true }

func readyFutures(n int) []future.Future[int] {
	fs := make([]future.Future[int], n)
	for i := range fs {
		fs[i] = &always{i}
	}
	return fs
}

// BenchmarkJoinAll makes a JoinAll of n ready futures and polls it to
// completion: three allocations (the join, its copy of the children, the
// result slice) whatever n.
func BenchmarkJoinAll(b *testing.B) {
	cx, _ := newCx()
	for _, n := range []int{1, 8, 64} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			fs := readyFutures(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := future.JoinAll(fs...).Poll(cx); !ok {
					b.Fatal("not ready")
				}
			}
		})
	}
}

// BenchmarkRace makes a Race of n ready futures and polls it: the first
// wins, the other n-1 are cancelled (they are not Cancelers, so each cancel
// is a failed type assertion). Two allocations: the race and its copy of
// the children.
func BenchmarkRace(b *testing.B) {
	cx, _ := newCx()
	for _, n := range []int{1, 8, 64} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			fs := readyFutures(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := future.Race(fs...).Poll(cx); !ok {
					b.Fatal("not ready")
				}
			}
		})
	}
}
