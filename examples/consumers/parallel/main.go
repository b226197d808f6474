// Command parallel uses the fork-join library alone: a recursive join and a parallel reduction.
package main

import (
	"fmt"
	"os"

	"github.com/blitz-go/blitz/parallel"
)

func fib(c *parallel.Ctx, n int) int {
	if n < 15 {
		a, b := 0, 1
		for range n {
			a, b = b, a+b
		}
		return a
	}
	x, y := parallel.JoinValues(c,
		func(c *parallel.Ctx) int { return fib(c, n-1) },
		func(c *parallel.Ctx) int { return fib(c, n-2) })
	return x + y
}

func main() {
	var f int
	parallel.Run(func(c *parallel.Ctx) { f = fib(c, 30) })
	data := make([]uint64, 1<<20)
	for i := range data {
		data[i] = uint64(i)
	}
	sum := parallel.Reduce(len(data), 0, func(lo, hi int) uint64 {
		var s uint64
		for _, v := range data[lo:hi] {
			s += v
		}
		return s
	}, func(a, b uint64) uint64 { return a + b })
	if f != 832040 || sum != uint64(len(data))*uint64(len(data)-1)/2 {
		fmt.Println("unexpected: fib", f, "sum", sum)
		os.Exit(1)
	}
	fmt.Printf("ok: parallel (fib(30) = %d, sum %d)\n", f, sum)
}
