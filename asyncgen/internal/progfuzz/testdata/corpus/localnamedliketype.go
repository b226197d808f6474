package progfuzzrun

import "github.com/blitz-go/blitz/future"

// A loop without awaits is copied as it is; its local val shadows the
// package's type val only inside the loop, where the generated code does
// not name the type (the generator once rejected it).

//blitz:async
func localnamedliketype(e *Env, n int) int {
	x := future.Await(e.Val(n))
	for i := range 2 {
		val := i + x
		e.Note("val=%d", val)
	}
	return x
}
