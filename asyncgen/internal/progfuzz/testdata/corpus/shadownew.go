package progfuzzrun

import "github.com/blitz-go/blitz/future"

// A local variable named new, in the case that declares a per-iteration
// cell, whose generated f.x = new(int) once called the local ("cannot call
// new").

//blitz:async
func shadownew(e *Env, n int) int {
	var fns []func() int
	for i := range 3 {
		future.Await(e.Val(i))
		new := i + n
		x := new * 2
		fns = append(fns, func() int { return x })
		future.Await(e.Val(x))
		e.Note("x=%d", x)
	}
	return fns[0]() + fns[2]()
}
