package progfuzzrun

import "github.com/blitz-go/blitz/future"

// A local variable named true before a return: the generated return
// "return x, true" once returned the local as Poll's ready flag, so for
// n < 2 the future reported pending after it returned and the next poll
// panicked.

//blitz:async
func shadowtrue(e *Env, n int) int {
	x := future.Await(e.Val(n))
	true := x > 1
	e.Note("true=%v", true)
	return x
}
