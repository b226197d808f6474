// Package conflict declares names that its async functions' generated code
// needs; the test expects a message at each.
package conflict

import "github.com/blitz-go/blitz/future"

//blitz:async
func greet(f future.Future[string]) string {
	return "hello, " + future.Await(f)
}

// greetAsync is the user's own, beside greet.
func greetAsync(name string) future.Future[string] { return future.Ready(name) }

// T has an async method whose constructor's name is taken.
type T struct{}

//blitz:async
func (t *T) run(f future.Future[int]) int { return future.Await(f) }

func (t T) runAsync() {}

//blitz:async
func fetch(f future.Future[int]) int { return future.Await(f) }

// fetchAsyncFuture takes the name of fetch's state machine.
type fetchAsyncFuture struct{}
