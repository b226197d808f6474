package parallel_test

import (
	"fmt"
	"sync/atomic"

	"github.com/blitz-go/blitz/parallel"
)

func fib(c *parallel.Ctx, n int) int {
	if n < 10 {
		return fibSeq(n)
	}
	x, y := parallel.JoinValues(c,
		func(c *parallel.Ctx) int { return fib(c, n-1) },
		func(c *parallel.Ctx) int { return fib(c, n-2) })
	return x + y
}

func ExampleJoinValues() {
	var r int
	parallel.Run(func(c *parallel.Ctx) { r = fib(c, 30) })
	fmt.Println(r)
	// Output: 832040
}

func ExamplePool_Join() {
	p, err := parallel.NewPool(parallel.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	var a, b string
	p.Join(func(*parallel.Ctx) { a = "left" }, func(*parallel.Ctx) { b = "right" })
	fmt.Println(a, b)
	// Output: left right
}

func ExampleFor() {
	squares := make([]int, 10)
	parallel.For(len(squares), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			squares[i] = i * i
		}
	}, parallel.Grain(2))
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

func ExampleReduce() {
	data := make([]uint64, 1_000_000)
	for i := range data {
		data[i] = uint64(i)
	}
	sum := parallel.Reduce(len(data), 0,
		func(lo, hi int) uint64 {
			var s uint64
			for _, v := range data[lo:hi] {
				s += v
			}
			return s
		},
		func(x, y uint64) uint64 { return x + y })
	fmt.Println(sum)
	// Output: 499999500000
}

func ExampleMapReduce() {
	longest := parallel.MapReduce(5, "",
		func(i int) string { return []string{"a", "abc", "ab", "abcd", "b"}[i] },
		func(x, y string) string {
			if len(y) > len(x) {
				return y
			}
			return x
		})
	fmt.Println(longest)
	// Output: abcd
}

func ExampleCollect() {
	fmt.Println(parallel.Collect(5, func(i int) string { return fmt.Sprint(i * 10) }))
	// Output: [0 10 20 30 40]
}

func ExampleMapInPlace() {
	s := []int{1, 2, 3}
	parallel.MapInPlace(s, func(v int) int { return -v })
	fmt.Println(s)
	// Output: [-1 -2 -3]
}

func ExampleScope() {
	var total atomic.Int64
	parallel.Scoped(func(s *parallel.Scope) {
		for i := 1; i <= 100; i++ {
			s.Spawn(func(*parallel.Ctx) { total.Add(int64(i)) })
		}
	})
	fmt.Println(total.Load())
	// Output: 5050
}

func ExampleCtx_Join() {
	p, err := parallel.NewPool(parallel.Config{})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	var leaves atomic.Int64
	var walk func(c *parallel.Ctx, depth int)
	walk = func(c *parallel.Ctx, depth int) {
		if depth == 0 {
			leaves.Add(1)
			return
		}
		c.Join(func(c *parallel.Ctx) { walk(c, depth-1) }, func(c *parallel.Ctx) { walk(c, depth-1) })
	}
	p.Run(func(c *parallel.Ctx) { walk(c, 12) })
	fmt.Println(leaves.Load())
	// Output: 4096
}

func ExampleOnceLatch() {
	var ready parallel.OnceLatch
	var msg string
	go func() {
		msg = "set before the latch"
		ready.Set()
	}()
	ready.Wait()
	fmt.Println(msg)
	// Output: set before the latch
}

func ExamplePanicError() {
	defer func() {
		pe := recover().(*parallel.PanicError)
		fmt.Println(pe.Value)
	}()
	parallel.Join(func(*parallel.Ctx) {}, func(*parallel.Ctx) { panic("b failed") })
	// Output: b failed
}
