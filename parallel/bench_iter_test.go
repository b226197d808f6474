package parallel_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blitz-go/blitz/parallel"
)

// Benchmarks of the iterators and the sort, each side by side with its
// sequential standard-library equivalent, on a pool of GOMAXPROCS workers.
// Run them together:
//
//	go test -run '^$' -bench 'Sort|Early|Iter' -count 3 .

// benchIterN is the input size of the iterator and sort benchmarks.
const benchIterN = 10_000_000

// sortInputs are the sort benchmark's inputs, made once.
func sortInputs() map[string][]uint64 {
	r := rand.New(rand.NewPCG(11, 12))
	in := map[string][]uint64{}
	for _, name := range []string{"random", "sorted", "reversed", "equal"} {
		s := make([]uint64, benchIterN)
		for i := range s {
			switch name {
			case "random":
				s[i] = r.Uint64()
			case "sorted":
				s[i] = uint64(i)
			case "reversed":
				s[i] = uint64(benchIterN - i)
			case "equal":
				s[i] = 42
			}
		}
		in[name] = s
	}
	return in
}

// BenchmarkSort sorts 10^7 uint64 with parallel.Sort and slices.Sort. The
// input is copied from a prepared slice before each sort, outside the
// measured time.
func BenchmarkSort(b *testing.B) {
	in := sortInputs()
	p := benchPool(b)
	sorts := []struct {
		name string
		sort func(s []uint64)
	}{
		{"parallel", func(s []uint64) { parallel.Sort(s, parallel.On(p)) }},
		{"slicesSort", func(s []uint64) { slices.Sort(s) }},
	}
	work := make([]uint64, benchIterN)
	for _, st := range sorts {
		for _, name := range []string{"random", "sorted", "reversed", "equal"} {
			b.Run(st.name+"/"+name, func(b *testing.B) {
				b.SetBytes(8 * benchIterN)
				for range b.N {
					b.StopTimer()
					copy(work, in[name])
					b.StartTimer()
					st.sort(work)
				}
				b.StopTimer()
				if !slices.IsSorted(work) {
					b.Fatal("not sorted")
				}
			})
		}
	}
}

// earlyData is 0, 1, ..., n-1 and the index of the match the early-exit
// benchmarks look for: 1% into the slice.
func earlyData() ([]uint64, uint64) {
	s := make([]uint64, benchIterN)
	for i := range s {
		s[i] = uint64(i)
	}
	return s, benchIterN / 100
}

// BenchmarkFindFirstEarly looks for a match 1% into 10^7 elements:
// without the early exit the parallel scan would read all of them.
func BenchmarkFindFirstEarly(b *testing.B) {
	data, m := earlyData()
	pred := func(x uint64) bool { return x == m }
	p := benchPool(b)
	b.Run("parallel", func(b *testing.B) {
		for range b.N {
			if v, ok := parallel.From(data).FindFirst(pred, parallel.On(p)); !ok || v != m {
				b.Fatal(v, ok)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		for range b.N {
			if i := slices.IndexFunc(data, pred); i != int(m) {
				b.Fatal(i)
			}
		}
	})
}

// BenchmarkAnyEarly is BenchmarkFindFirstEarly for Any, whose match stops
// every piece, left or right.
func BenchmarkAnyEarly(b *testing.B) {
	data, m := earlyData()
	pred := func(x uint64) bool { return x == m }
	p := benchPool(b)
	b.Run("parallel", func(b *testing.B) {
		for range b.N {
			if !parallel.From(data).Any(pred, parallel.On(p)) {
				b.Fatal("not found")
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		for range b.N {
			if !slices.ContainsFunc(data, pred) {
				b.Fatal("not found")
			}
		}
	})
}

func mfsMap(x uint64) uint64  { return x*3 + 1 }
func mfsFilter(x uint64) bool { return x%4 == 0 }

// The same functions as values the compiler cannot see through, for the
// sequential loop that pays the iterator's per-item call cost.
var (
	mfsMapFn    = mfsMap
	mfsFilterFn = mfsFilter
)

// BenchmarkIterMapFilterSum is Sum(Map(...).Filter(...)) over 10^7 uint64,
// one fused pass, against the hand-written loop, in which the compiler
// inlines both functions, and the same loop calling them through func
// values, as the iterator must (sequentialFuncValues).
func BenchmarkIterMapFilterSum(b *testing.B) {
	data, _ := earlyData()
	var want uint64
	for _, x := range data {
		if y := mfsMap(x); mfsFilter(y) {
			want += y
		}
	}
	p := benchPool(b)
	b.Run("parallel", func(b *testing.B) {
		b.SetBytes(8 * benchIterN)
		for range b.N {
			it := parallel.Map(parallel.From(data), mfsMap).Filter(mfsFilter)
			if got := parallel.Sum(it, parallel.On(p)); got != want {
				b.Fatal(got, want)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(8 * benchIterN)
		for range b.N {
			var s uint64
			for _, x := range data {
				if y := mfsMap(x); mfsFilter(y) {
					s += y
				}
			}
			if s != want {
				b.Fatal(s, want)
			}
		}
	})
	b.Run("sequentialFuncValues", func(b *testing.B) {
		b.SetBytes(8 * benchIterN)
		for range b.N {
			var s uint64
			for _, x := range data {
				if y := mfsMapFn(x); mfsFilterFn(y) {
					s += y
				}
			}
			if s != want {
				b.Fatal(s, want)
			}
		}
	})
}
