package progfuzzrun

import "github.com/blitz-go/blitz/future"

// A local variable named new before the zeroing of a hoisted variable of a
// type parameter, whose generated f.g = *new(N) once called the local.

//blitz:async
func shadownewgeneric[N ~int](e *Env, n N) int {
	x := future.Await(e.Val(int(n)))
	new := x + 1
	e.Note("new=%d", new)
	var g N
	future.Await(e.Val(int(g)))
	return int(g) + x
}
