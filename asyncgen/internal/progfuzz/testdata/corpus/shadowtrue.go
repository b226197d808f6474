package progfuzzrun

import "github.com/blitz-go/blitz/future"

// A local variable named true: the generated return is "return x, true",
// which returns the local as Poll's ready flag, so for n < 2 the future
// reports pending after it returned and the next poll panics.

//blitz:async
func shadowtrue(e *Env, n int) int {
	x := future.Await(e.Val(n))
	true := x > 1
	e.Note("true=%v", true)
	return x
}
