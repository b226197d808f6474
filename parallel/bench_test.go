package parallel_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/parallel"
)

// The benchmarks run each workload side by side with its goroutine
// equivalent (and a sequential one where it means something), on a pool of
// GOMAXPROCS workers.

func benchPool(b *testing.B) *parallel.Pool {
	b.Helper()
	p, err := parallel.NewPool(parallel.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	return p
}

// treeFuncs returns, for each depth d <= max, the job that builds a binary
// tree of joins of depth d: made once, so that the benchmark measures the
// joins and not the closures.
func treeFuncs(max int) []func(*parallel.Ctx) {
	fs := make([]func(*parallel.Ctx), max+1)
	fs[0] = func(*parallel.Ctx) {}
	for d := 1; d <= max; d++ {
		sub := fs[d-1]
		fs[d] = func(c *parallel.Ctx) { c.Join(sub, sub) }
	}
	return fs
}

// treeGo builds the same tree with a goroutine and a WaitGroup per node.
func treeGo(d int) {
	if d == 0 {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { treeGo(d - 1); wg.Done() }()
	treeGo(d - 1)
	wg.Wait()
}

func BenchmarkForkJoinTree(b *testing.B) {
	depths := []struct {
		name string
		d    int
	}{{"depth=10", 10}, {"depth=15", 15}, {"depth=20", 20}}
	fs := treeFuncs(20)
	for _, kind := range []string{"parallel", "goroutines"} {
		for _, dd := range depths {
			d := dd.d
			b.Run(kind+"/"+dd.name, func(b *testing.B) {
				nodes := float64(int(1)<<d - 1)
				var run func()
				if kind == "parallel" {
					p := benchPool(b)
					run = func() { p.Run(fs[d]) }
				} else {
					run = func() { treeGo(d) }
				}
				b.ResetTimer()
				for range b.N {
					run()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nodes, "ns/node")
			})
		}
	}
}

const (
	fibN      = 35
	fibCutoff = 20
)

func fibSeq(n int) int {
	if n < 2 {
		return n
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

func fibPar(c *parallel.Ctx, n int) int {
	if n < fibCutoff {
		return fibSeq(n)
	}
	x, y := parallel.JoinValues(c,
		func(c *parallel.Ctx) int { return fibPar(c, n-1) },
		func(c *parallel.Ctx) int { return fibPar(c, n-2) })
	return x + y
}

func fibGo(n int) int {
	if n < fibCutoff {
		return fibSeq(n)
	}
	var x int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { x = fibGo(n - 1); wg.Done() }()
	y := fibGo(n - 2)
	wg.Wait()
	return x + y
}

func BenchmarkFib(b *testing.B) {
	want := fibSeq(fibN)
	b.Run("parallel", func(b *testing.B) {
		p := benchPool(b)
		for range b.N {
			var r int
			p.Run(func(c *parallel.Ctx) { r = fibPar(c, fibN) })
			if r != want {
				b.Fatal(r)
			}
		}
	})
	b.Run("goroutines", func(b *testing.B) {
		for range b.N {
			if r := fibGo(fibN); r != want {
				b.Fatal(r)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		for range b.N {
			if r := fibSeq(fibN); r != want {
				b.Fatal(r)
			}
		}
	})
}

const sumN = 50_000_000

var sumData = sync.OnceValue(func() []uint64 {
	s := make([]uint64, sumN)
	for i := range s {
		s[i] = uint64(i) * 2654435761
	}
	return s
})

// sumSeq is the loop every variant of BenchmarkSum runs, in one place in
// the binary: it is not inlined, so that the parallel leaves, the goroutine
// chunks and the sequential run execute the same machine code. When it was
// inlined into this benchmark's leaf closure, the pool's Sum took 25-27 ms
// where, in the same process, a test's leaf closure with its own inlined
// copy took 11-16 ms and this function 12-15 ms: that one copy of the loop
// ran at half speed (code placement), which compared two loops, not the
// pool with a sequential sum.
//
//go:noinline
func sumSeq(s []uint64) uint64 {
	var t uint64
	for _, v := range s {
		t += v
	}
	return t
}

func BenchmarkSum(b *testing.B) {
	data := sumData()
	want := sumSeq(data)
	b.Run("parallel", func(b *testing.B) {
		p := benchPool(b)
		b.SetBytes(8 * sumN)
		for range b.N {
			r := parallel.Reduce(len(data), 0,
				func(lo, hi int) uint64 { return sumSeq(data[lo:hi]) },
				func(x, y uint64) uint64 { return x + y },
				parallel.On(p))
			if r != want {
				b.Fatal(r)
			}
		}
	})
	b.Run("goroutinesChunked", func(b *testing.B) {
		b.SetBytes(8 * sumN)
		w := runtime.GOMAXPROCS(0)
		for range b.N {
			parts := make([]uint64, w)
			var wg sync.WaitGroup
			for k := range w {
				lo, hi := k*len(data)/w, (k+1)*len(data)/w
				wg.Add(1)
				go func() { parts[k] = sumSeq(data[lo:hi]); wg.Done() }()
			}
			wg.Wait()
			if r := sumSeq(parts); r != want {
				b.Fatal(r)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(8 * sumN)
		for range b.N {
			if r := sumSeq(data); r != want {
				b.Fatal(r)
			}
		}
	})
}

// BenchmarkJoinInline is one Join whose b is popped back, on a one-worker
// pool, with funcs made once: the machinery's own cost, which allocates
// nothing.
func BenchmarkJoinInline(b *testing.B) {
	p, err := parallel.NewPool(parallel.Config{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	noop := func(*parallel.Ctx) {}
	b.ReportAllocs()
	p.Run(func(c *parallel.Ctx) {
		b.ResetTimer()
		for range b.N {
			c.Join(noop, noop)
		}
	})
}
