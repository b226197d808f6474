// Package cxspawn is an async function that spawns tasks beside itself on
// the runtime running it, reached through future.Cx(), with no Handle
// passed in: the generated code's test against the runtime.
package cxspawn

import (
	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

// square yields once, then squares.
//
//blitz:async
func square(n int) int {
	future.Await(blitz.Yield())
	return n * n
}

// sumOfSquares spawns a task per square and sums their outcomes, which
// each await gives as (value, error).
//
//blitz:async
func sumOfSquares(n int) (int, error) {
	hs := make([]blitz.JoinHandle[int], 0, n)
	for i := range n {
		hs = append(hs, blitz.Spawn(future.Cx(), squareAsync(i)))
	}
	total := 0
	for _, h := range hs {
		v, err := future.Try(h)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
}
