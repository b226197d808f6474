package parallel

import (
	"errors"
	"fmt"
	"runtime/debug"
)

var (
	// ErrWorkers is wrapped by NewPool's error for a Config.Workers outside 0
	// to MaxWorkers.
	ErrWorkers = errors.New("parallel: invalid number of workers")
	// ErrSleepyRounds is wrapped by NewPool's error for a negative
	// Config.SleepyRounds.
	ErrSleepyRounds = errors.New("parallel: invalid sleepy rounds")
	// ErrClosed is the panic value of a call that submits work to a closed
	// pool (Run, Join, Scope and the loops on it).
	ErrClosed = errors.New("parallel: pool closed")
	// ErrPanicked is matched (errors.Is) by every *PanicError.
	ErrPanicked = errors.New("parallel: job panicked")
	// ErrGoexit is the Value of the *PanicError with which a job that called
	// runtime.Goexit is reported to whoever waits for it (Join, Scope, Run,
	// the loops), as if the job had panicked with it: errors.Is(err,
	// ErrGoexit) holds for that *PanicError. testing's t.FailNow, t.Fatal
	// and t.SkipNow call runtime.Goexit, so they are reported this way when
	// called inside a job; the test is marked failed (or skipped) all the
	// same. The Goexit cannot be stopped: it ends the worker's goroutine,
	// after every job running on it has been finished, and a new goroutine
	// takes the worker's place. See the package doc, section "Goexit in a
	// job".
	ErrGoexit = errors.New("parallel: a job called runtime.Goexit (t.FailNow, t.Fatal or t.SkipNow in a job do)")
)

// Panic messages for misuse (package doc, section "Panics").
const (
	msgCloseFromWorker = "parallel: Close called from a worker of the pool it closes"
	msgSpawnFinished   = "parallel: Spawn on a scope that has finished"
	msgCountNegative   = "parallel: CountLatch count below zero"
	msgCountAfterSet   = "parallel: CountLatch.Add after the latch was set"
	msgGrain           = "parallel: Grain must be at least 1"
	msgNilExecutor     = "parallel: On(nil)"
)

// PanicError is the value with which Join, Scope, Run and the loops re-panic
// when a job they waited for panicked: the value passed to panic and the stack
// of the goroutine that panicked, captured where the job was run (which may be
// another worker than the caller's). A panic whose value is already a
// *PanicError, from a nested Join for example, is passed on unchanged, so the
// Stack is always that of the original panic. errors.Is(err, ErrPanicked)
// holds, and errors.Is and errors.As see through to Value when it is an error:
// errors.Is(err, ErrGoexit) tells a job that called runtime.Goexit.
//
// See the package doc, section "Panics".
type PanicError struct {
	// Value is what the job passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, as runtime/debug.Stack.
	Stack []byte
}

// Error reports the panic value; the stack is in Stack. Any goroutine may call
// it.
func (e *PanicError) Error() string {
	return fmt.Sprintf("parallel: job panicked: %v", e.Value)
}

// Is makes errors.Is(e, ErrPanicked) true. Any goroutine may call it.
func (e *PanicError) Is(target error) bool { return target == ErrPanicked }

// Unwrap returns the panic value if it is an error. Any goroutine may call it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// toPanicError turns a recovered value into the *PanicError to re-panic with.
// Called from the deferred recover of the goroutine that panicked, so that
// the stack is the panic's.
func toPanicError(r any) *PanicError {
	if pe, ok := r.(*PanicError); ok {
		return pe
	}
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// catch runs f and returns its panic as a *PanicError, or nil. Any goroutine
// may call it.
func catch(f func()) (pe *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			pe = toPanicError(r)
		}
	}()
	f()
	return nil
}

// rethrow re-panics with pe if it is not nil. Any goroutine may call it.
func rethrow(pe *PanicError) {
	if pe != nil {
		panic(pe)
	}
}
