package scheduler

import (
	"errors"
	"fmt"

	"github.com/blitz-go/blitz/future"
)

var (
	// ErrShutdown resolves the JoinHandle of every task that shutdown
	// dropped, and of every task spawned after shutdown began; TrySpawn
	// returns it too.
	ErrShutdown = errors.New("scheduler: shut down")
	// ErrCancelled resolves the JoinHandle of a task cancelled through
	// JoinHandle.Cancel before it completed.
	ErrCancelled = errors.New("scheduler: task cancelled")
	// ErrPanicked is matched (errors.Is) by every *PanicError.
	ErrPanicked = errors.New("scheduler: task panicked")
	// ErrBackpressure is returned by TrySpawn when the live-task limit of
	// Config.MaxLiveTasks is reached; the future was not taken.
	ErrBackpressure = errors.New("scheduler: too many live tasks")
	// ErrConfig is wrapped by New's error for an invalid Config.
	ErrConfig = errors.New("scheduler: invalid config")
	// ErrNilFuture is the error of TrySpawn, and the outcome of the
	// JoinHandle that Spawn returns, for a nil future. It is
	// future.ErrNilFuture itself, so errors.Is matches either.
	ErrNilFuture = future.ErrNilFuture
	// ErrBlockingInTask is the error of a call that would block a worker
	// goroutine, made from inside a task (its poll, or a Driver's call):
	// JoinHandle.Wait on a task that has not finished, or Shutdown before
	// the shutdown finished. On a one-worker scheduler such a call would
	// wait forever, since the worker it blocks is the one that would have
	// to run what it waits for. A task polls the JoinHandle instead.
	ErrBlockingInTask = errors.New("scheduler: blocking call inside a task would block its worker")
	// ErrZeroHandle is the panic value of a method of the zero JoinHandle.
	ErrZeroHandle = errors.New("scheduler: zero JoinHandle")
	// ErrDetached is the outcome Poll and Wait report on a detached
	// JoinHandle.
	ErrDetached = errors.New("scheduler: JoinHandle detached")
)

// PanicError is how a task's panic reaches its JoinHandle: the value passed
// to panic and the stack of the panicking goroutine, captured in the
// deferred recover of the poll. errors.Is(err, ErrPanicked) holds, and
// errors.As finds the value when it is an error (Unwrap returns it).
type PanicError struct {
	// Value is what the task passed to panic.
	Value any
	// Stack is the goroutine's stack at the recover, as runtime/debug.Stack.
	Stack []byte
}

// Error reports the panic value; the stack is in Stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("scheduler: task panicked: %v", e.Value)
}

// Is makes errors.Is(e, ErrPanicked) true.
func (e *PanicError) Is(target error) bool { return target == ErrPanicked }

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through to it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
