package parallel_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blitz-go/blitz/parallel"
)

// sortDemoN is the input size of BenchmarkSortDemo: small enough that one
// sort takes tens of milliseconds, large enough to be far above Sort's
// sequential cut-off (16384 elements).
const sortDemoN = 1_000_000

// BenchmarkSortDemo is BenchmarkSort's random input at 10^6 elements
// instead of 10^7: the shape the side-by-side demonstration
// (cmd/blitzbench) runs several times in its two-minute budget, where
// BenchmarkSort's setup alone (four inputs of 10^7 elements) takes about a
// second. parallel.Sort on a pool of GOMAXPROCS workers against
// slices.Sort; the input is copied from a prepared slice before each sort,
// outside the measured time.
func BenchmarkSortDemo(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	in := make([]uint64, sortDemoN)
	for i := range in {
		in[i] = r.Uint64()
	}
	work := make([]uint64, sortDemoN)
	sorts := []struct {
		name string
		sort func(b *testing.B) func(s []uint64)
	}{
		{"parallel", func(b *testing.B) func(s []uint64) {
			p := benchPool(b)
			return func(s []uint64) { parallel.Sort(s, parallel.On(p)) }
		}},
		{"slicesSort", func(*testing.B) func(s []uint64) { return slices.Sort[[]uint64] }},
	}
	for _, st := range sorts {
		b.Run(st.name, func(b *testing.B) {
			sort := st.sort(b)
			b.SetBytes(8 * sortDemoN)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				copy(work, in)
				b.StartTimer()
				sort(work)
			}
			b.StopTimer()
			if !slices.IsSorted(work) {
				b.Fatal("not sorted")
			}
		})
	}
}
