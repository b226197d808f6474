package parallel_test

import (
	"slices"
	"testing"

	"github.com/blitz-go/blitz/parallel"
)

// FuzzIterPipeline checks a Map-Filter-Flatten pipeline and its terminal
// operations against the sequential computation, on a 2-worker pool with
// a fuzzed grain, chunk size, filter modulus and target. Run it with
// go test -fuzz FuzzIterPipeline.
func FuzzIterPipeline(f *testing.F) {
	p := newPool(f, 2)
	f.Add([]byte("fork-join"), uint8(3), uint8(1), uint8(2), uint8('o'))
	f.Add(make([]byte, 500), uint8(7), uint8(0), uint8(5), uint8(0))
	f.Add([]byte{}, uint8(1), uint8(1), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, grain, k, mod, target uint8) {
		xs := make([]int, len(data))
		for i, b := range data {
			xs[i] = int(b)
		}
		m := int(mod%16) + 1
		chunk := int(k%16) + 1
		keep := func(x int) bool { return x%m != 0 }
		f := func(x int) int { return x*5 - 3 }
		opts := []parallel.Option{parallel.On(p)}
		if grain > 0 {
			opts = append(opts, parallel.Grain(int(grain)))
		}

		var want []int
		for _, x := range xs {
			if keep(x) {
				want = append(want, f(x))
			}
		}
		it := parallel.Map(parallel.From(xs).Filter(keep), f)
		if got := it.Collect(opts...); !slices.Equal(want, got) {
			t.Fatalf("Collect: got %v, want %v", got, want)
		}
		if got, w := parallel.Sum(it, opts...), sumInts(want); got != w {
			t.Fatalf("Sum: got %d, want %d", got, w)
		}
		eq := func(x int) bool { return x == f(int(target)) }
		if got, w := it.Position(eq, opts...), slices.IndexFunc(want, eq); got != w {
			t.Fatalf("Position: got %d, want %d", got, w)
		}
		gt := func(x int) bool { return x > f(int(target)) }
		v, ok := it.FindFirst(gt, opts...)
		if i := slices.IndexFunc(want, gt); ok != (i >= 0) || (ok && v != want[i]) {
			t.Fatalf("FindFirst: got %d %v, want index %d", v, ok, i)
		}

		flat := parallel.Flatten(parallel.Map(parallel.Chunks(xs, chunk), func(c []int) []int {
			return slices.DeleteFunc(slices.Clone(c), func(x int) bool { return !keep(x) })
		}))
		var wantFlat []int
		for _, x := range xs {
			if keep(x) {
				wantFlat = append(wantFlat, x)
			}
		}
		if got := flat.Collect(opts...); !slices.Equal(wantFlat, got) {
			t.Fatalf("Flatten: got %v, want %v", got, wantFlat)
		}
	})
}
