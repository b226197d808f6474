package dotimport

import . "github.com/blitz-go/blitz/future"

// A dot import of future: Await is not printed, so the generated file
// imports the package by dot only if it names something else of it.
//
//blitz:async
func dotted(f Future[int]) int {
	x := Await(f)
	return x + 1
}
