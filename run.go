package blitz

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blitz-go/blitz/future"
)

// Run runs f to completion on a new runtime with the default
// configuration (one worker per CPU, the best I/O backend there is), then
// shuts the runtime down and returns f's value: a program's main in one
// call, the way an async main is in other runtimes.
//
//	func main() {
//		n, err := blitz.Run(context.Background(), countAsync(os.Args[1:]))
//		...
//	}
//
// If ctx ends first, f is cancelled and the error wraps ctx's cause. The
// tasks f spawned and left running are cancelled by the shutdown; blocking
// calls still running (a read of a terminal through FromIOReader, a
// SpawnBlocking function) are not waited for: they finish on their own
// threads, as goroutines do when main returns. An error
// starting or stopping the runtime is returned too (the stop's joined to
// f's). Use New and BlockOn for a runtime configured otherwise, or one
// that outlives f.
func Run[T any](ctx context.Context, f future.Future[T]) (T, error) {
	rt, err := New(Config{})
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := BlockOn(ctx, rt.Handle(), f)
	if serr := rt.shutdown(context.Background(), false); serr != nil {
		err = errors.Join(err, serr)
	}
	return v, err
}

// RunFallible is Run for a fallible future, one whose value is a
// future.Result[T] (an async function with results (T, error)): it returns
// the future's value and error, or the runtime's.
func RunFallible[T any](ctx context.Context, f future.Future[future.Result[T]]) (T, error) {
	r, err := Run(ctx, f)
	if err != nil {
		var zero T
		return zero, err
	}
	return r.Value, r.Err
}

// Main is RunFallible for a program's main: it returns f's value, and if f
// fails, ctx ends first or the runtime cannot start, it prints the error on
// standard error, prefixed with the program's name, and exits with status
// 1, as log.Fatal does (deferred calls do not run).
//
//	func main() {
//		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
//		defer stop()
//		for _, r := range blitz.Main(ctx, fetchAllAsync(os.Args[1:])) {
//			fmt.Println(r)
//		}
//	}
func Main[T any](ctx context.Context, f future.Future[future.Result[T]]) T {
	v, err := RunFallible(ctx, f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
	return v
}
