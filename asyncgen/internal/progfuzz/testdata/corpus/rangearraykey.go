package progfuzzrun

import "github.com/blitz-go/blitz/future"

// An array variable ranged by its key only, with an await between its
// declaration and the loop: the loop's head, in a later case, reads the
// array (its length), so the array must be a field (it once stayed a
// local of the first case: "undefined: arr").

//blitz:async
func rangearraykey(e *Env, n int) {
	arr := [3]int{n, n, n}
	e.Note("arr=%v", arr)
	future.Await(e.Val(1))
	for k := range arr {
		e.Note("k=%d", k)
		future.Await(e.Val(n))
	}
}
