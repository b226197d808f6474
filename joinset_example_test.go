package blitz_test

import (
	"context"
	"fmt"
	"sort"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// ExampleJoinSet spawns tasks into a set from a goroutine and collects
// their results as they finish. A task would await set.Next() in a loop
// instead, until it completes with ErrJoinSetEmpty.
func ExampleJoinSet() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())

	var set blitz.JoinSet[int]
	for i := 1; i <= 4; i++ {
		set.SpawnOn(rt.Handle(), future.PollFn(func(*future.Context) (int, bool) { return i * i, true }))
	}
	fmt.Println("tasks:", set.Len())
	results, err := set.WaitAll(context.Background()) // in the order they finished
	if err != nil {
		panic(err)
	}
	var squares []int
	for _, r := range results {
		if r.Err != nil {
			panic(r.Err)
		}
		squares = append(squares, r.Value)
	}
	sort.Ints(squares)
	fmt.Println("squares:", squares)
	_, err = set.WaitNext(context.Background())
	fmt.Println(err)
	// Output:
	// tasks: 4
	// squares: [1 4 9 16]
	// blitz: join set is empty
}
