package parallel_test

import (
	"fmt"
	"strings"

	"github.com/blitz-go/blitz/parallel"
)

func ExampleMap() {
	words := []string{"fork", "join", "steal"}
	lengths := parallel.Map(parallel.From(words), func(w string) int { return len(w) })
	fmt.Println(lengths.Collect())
	// Output: [4 4 5]
}

func ExampleIter_Filter() {
	evens := parallel.Range(10).Filter(func(i int) bool { return i%2 == 0 })
	fmt.Println(evens.Collect(), evens.Count())
	// Output: [0 2 4 6 8] 5
}

func ExampleSum() {
	xs := make([]int, 1_000_000)
	for i := range xs {
		xs[i] = i
	}
	squares := parallel.Map(parallel.From(xs), func(x int) int { return x * x })
	fmt.Println(parallel.Sum(squares.Filter(func(x int) bool { return x%3 == 0 })))
	// Output: 111111277777611111
}

func ExampleMinBy() {
	type city struct {
		name string
		pop  int
	}
	cities := []city{{"Oslo", 709}, {"Bergen", 291}, {"Tromsø", 78}, {"Bodø", 53}}
	smallest, _ := parallel.MinBy(parallel.From(cities), func(c city) int { return c.pop })
	largest, _ := parallel.MaxBy(parallel.From(cities), func(c city) int { return c.pop })
	fmt.Println(smallest.name, largest.name)
	// Output: Bodø Oslo
}

func ExampleIter_FindFirst() {
	// Other workers stop scanning once a match is known left of them.
	v, ok := parallel.Range(10_000_000).FindFirst(func(i int) bool { return i*i > 5000 })
	fmt.Println(v, ok)
	// Output: 71 true
}

func ExampleIter_Position() {
	s := []string{"a", "b", "c", "b"}
	fmt.Println(parallel.From(s).Position(func(x string) bool { return x == "b" }))
	fmt.Println(parallel.From(s).Position(func(x string) bool { return x == "z" }))
	// Output:
	// 1
	// -1
}

func ExampleIter_Any() {
	xs := []int{3, 5, 7, 9}
	odd := func(x int) bool { return x%2 == 1 }
	fmt.Println(parallel.From(xs).Any(func(x int) bool { return x > 8 }), parallel.From(xs).All(odd))
	// Output: true true
}

func ExampleChunks() {
	s := []int{1, 2, 3, 4, 5, 6, 7}
	sums := parallel.Map(parallel.Chunks(s, 3), func(c []int) int {
		t := 0
		for _, x := range c {
			t += x
		}
		return t
	})
	fmt.Println(sums.Collect())
	// Output: [6 15 7]
}

func ExampleEnumerate() {
	for _, p := range parallel.Enumerate(parallel.From([]string{"x", "y"})).Collect() {
		fmt.Println(p.Index, p.Value)
	}
	// Output:
	// 0 x
	// 1 y
}

func ExampleZip() {
	a := []int{1, 2, 3}
	b := []int{10, 20, 30, 40}
	dot := parallel.Map(parallel.Zip(parallel.From(a), parallel.From(b)),
		func(p parallel.Pair[int, int]) int { return p.First * p.Second })
	fmt.Println(parallel.Sum(dot))
	// Output: 140
}

func ExampleChain() {
	it := parallel.Chain(parallel.From([]int{1, 2}), parallel.Range(3), parallel.From([]int{9}))
	fmt.Println(it.Collect())
	// Output: [1 2 0 1 2 9]
}

func ExampleFlatten() {
	lines := []string{"a b", "", "c d e"}
	words := parallel.Flatten(parallel.Map(parallel.From(lines), strings.Fields))
	fmt.Println(words.Collect())
	// Output: [a b c d e]
}

func ExampleIter_Reduce() {
	// Concatenation is associative but not commutative: the order holds.
	s := parallel.From([]string{"f", "o", "r", "k"}).Reduce("", func(x, y string) string { return x + y })
	fmt.Println(s)
	// Output: fork
}

func ExampleFold() {
	words := []string{"go", "zig", "rust", "go", "c"}
	counts := parallel.Fold(parallel.From(words),
		func() map[string]int { return map[string]int{} },
		func(m map[string]int, w string) map[string]int { m[w]++; return m },
		func(x, y map[string]int) map[string]int {
			for k, v := range y {
				x[k] += v
			}
			return x
		})
	fmt.Println(counts)
	// Output: map[c:1 go:2 rust:1 zig:1]
}

func ExampleIter_ForEach() {
	// Inside a job, pass the job's Ctx: the loop runs on its worker.
	p, _ := parallel.NewPool(parallel.Config{Workers: 2})
	defer p.Close()
	out := make([]int, 5)
	p.Run(func(c *parallel.Ctx) {
		parallel.Enumerate(parallel.Range(5)).ForEach(func(x parallel.Indexed[int]) {
			out[x.Index] = x.Value * 10
		}, parallel.On(c))
	})
	fmt.Println(out)
	// Output: [0 10 20 30 40]
}
