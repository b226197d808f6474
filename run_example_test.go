package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// ExampleRun runs a future to completion as a program's main would: on a
// runtime made for it and shut down after it. Here the future sleeps on the
// runtime's timer wheel, then gives a value; an async function's
// constructor (mainAsync(args)) is the usual future.
func ExampleRun() {
	greet := future.Map(blitz.Sleep(time.Millisecond), func(struct{}) string { return "hello" })
	s, err := blitz.Run(context.Background(), greet)
	fmt.Println(s, err)
	// Output: hello <nil>
}

// ExampleRunFallible runs a fallible future, one whose value is a
// future.Result (an async function with results (T, error)), and gives its
// value and error as a Go call does.
func ExampleRunFallible() {
	parse := future.Ready(future.Fail[int](errors.New("no digits")))
	n, err := blitz.RunFallible(context.Background(), parse)
	fmt.Println(n, err)
	// Output: 0 no digits
}

// ExampleSpawnFallibleOn spawns a fallible task and waits for it: its
// outcome is the future's value and error, not a Result inside a Result.
// In an async function, future.Try(blitz.SpawnFallible(future.Cx(), f))
// awaits it the same way.
func ExampleSpawnFallibleOn() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())

	ok := blitz.SpawnFallibleOn(rt.Handle(), future.Ready(future.Ok(42)))
	fails := blitz.SpawnFallibleOn(rt.Handle(), future.Ready(future.Fail[int](errors.New("refused"))))
	fmt.Println(ok.Wait(context.Background()))
	fmt.Println(fails.Wait(context.Background()))
	// Output:
	// 42 <nil>
	// 0 refused
}

// ExampleNewTicker waits for three ticks of a ticker, as a task would
// await it in a loop (future.Await(iv) in an async function, or a select
// case <-future.OnKeep(iv)), then cancels it as a time.Ticker is stopped.
func ExampleNewTicker() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())

	iv := blitz.NewTicker(2 * time.Millisecond)
	defer iv.Cancel()
	start := time.Now()
	for range 3 {
		if _, err := blitz.BlockOn(context.Background(), rt.Handle(), iv); err != nil {
			panic(err)
		}
	}
	fmt.Println("three ticks, at least 6ms:", time.Since(start) >= 6*time.Millisecond)
	// Output: three ticks, at least 6ms: true
}

// ExampleJoinSet_Values collects the values of every task of a set, or
// the first failure, errgroup's Wait with values.
func ExampleJoinSet_Values() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())

	var set blitz.JoinSet[int]
	for i := 1; i <= 4; i++ {
		set.SpawnOn(rt.Handle(), future.Map(blitz.Sleep(time.Duration(5-i)*time.Millisecond), func(struct{}) int { return i * i }))
	}
	r, err := blitz.BlockOn(context.Background(), rt.Handle(), set.Values())
	if err != nil {
		panic(err)
	}
	slices.Sort(r.Value) // they come in the order they finished
	fmt.Println(r.Value, r.Err)
	// Output: [1 4 9 16] <nil>
}
