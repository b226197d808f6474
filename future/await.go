package future

import "errors"

// ErrAwaitOutsideGenerated is the panic value of Await when it is really
// called: Await is a marker that the blitzgen generator replaces, never a
// function that waits.
var ErrAwaitOutsideGenerated = errors.New("future: Await called outside a generated async function")

// Await marks a point where an async function waits for f and goes on with
// its value. It is written in a function in direct style whose doc comment
// holds the directive
//
//	//blitz:async
//
// and the blitzgen generator (github.com/blitz-go/blitz/asyncgen/cmd/blitzgen,
// run by go generate) writes beside it a constructor that returns the same
// computation as a Future: a state machine that polls f where the source
// awaits it, without a goroutine. The direct-style function itself still
// compiles but must not be called: Await does not wait, it panics with
// ErrAwaitOutsideGenerated.
//
// The generator recognises calls of this function (through any import name
// of this package) as a statement, as the right-hand side of an assignment
// to a variable, or of a short variable declaration.
func Await[T any](f Future[T]) T {
	_ = f
	if awaitPanics {
		panic(ErrAwaitOutsideGenerated)
	}
	var zero T
	return zero
}

// awaitPanics is always true. Await tests it rather than panicking
// unconditionally so that linters (staticcheck's dead-code and unused-value
// checks) do not conclude that Await never returns and report the code after
// every await of a direct-style async function.
var awaitPanics = true
