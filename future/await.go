package future

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
)

// ErrAwaitOutsideGenerated is what the panic of Await, when it is really
// called, is (errors.Is): Await is a marker that the blitzgen generator
// replaces, never a function that waits.
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
// compiles but must not be called (blitzgen refuses a call of it in its
// package): Await does not wait, it panics with an error that is
// ErrAwaitOutsideGenerated (errors.Is) and names the function and the
// constructor to call instead.
//
// The generator recognises calls of this function (through any import name
// of this package) as a statement, as the right-hand side of an assignment
// to a variable, or of a short variable declaration.
func Await[T any](f Future[T]) T {
	_ = f
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	var zero T
	return zero
}

// awaitPanics is always true. Await tests it rather than panicking
// unconditionally so that linters (staticcheck's dead-code and unused-value
// checks) do not conclude that Await never returns and report the code after
// every await of a direct-style async function.
var awaitPanics = true

// Try marks a point where an async function waits for a fallible future and
// goes on with its value and error, the shape of a Go call that can fail:
//
//	n, err := future.Try(conn.Read(buf))
//	if err != nil {
//		return 0, err
//	}
//
// It is Await for a Future[Result[T]], unpacked. An async function whose
// results are (T, error) may also return it directly: return
// future.Try(f). Like Await, it is replaced by the generator and panics
// with an error that is ErrAwaitOutsideGenerated if it is really called.
func Try[T any](f Future[Result[T]]) (T, error) {
	_ = f
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	var zero T
	return zero, nil
}

// outsideGenerated is the panic of an Await or Try really called: an error
// that is ErrAwaitOutsideGenerated and names the function that called it
// (skip frames above its caller) and its generated constructor, which is
// what the program meant to call.
func outsideGenerated(skip int) error {
	pc, _, _, ok := runtime.Caller(skip + 1)
	fn := runtime.FuncForPC(pc)
	if !ok || fn == nil {
		return ErrAwaitOutsideGenerated
	}
	name := fn.Name() // path/to/pkg.f, path/to/pkg.(*T).f, path/to/pkg.f[...]
	name = name[strings.LastIndex(name, "/")+1:]
	name, _, _ = strings.Cut(name, "[")
	short := name[strings.LastIndex(name, ".")+1:]
	return fmt.Errorf("%w: %s ran as written; call its constructor %sAsync and await it in an async function, spawn it, or run it with BlockOn",
		ErrAwaitOutsideGenerated, name, short)
}

// Cx marks, in an async function, the Context of the poll that runs it:
// the generator replaces it with the Context its Poll received, so that
// the function can reach the runtime running it, to spawn a task beside it
// (blitz.Spawn(future.Cx(), workAsync(...))) or to take its Handle
// (blitz.Current(future.Cx())). The Context is valid only during that
// poll: use it at once, never keep it past an await. A deferred function
// literal cannot use it (it may run from Cancel, without a poll). Like
// Await, it panics with an error that is ErrAwaitOutsideGenerated if it
// is really called.
func Cx() *Context {
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	return nil
}
