package progfuzzrun

import "github.com/blitz-go/blitz/future"

// A local variable named future, legal after the last await in its scope,
// before a return that the generated code wraps as future.Result[int]{...}
// (the local once shadowed the package there: "future.Result is not a
// type").

//blitz:async
func shadowfuture(e *Env, n int) (int, error) {
	x := future.Await(e.Val(n))
	if x > 2 {
		future := x + 1
		return future, nil
	}
	return x, nil
}
