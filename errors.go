package blitz

import (
	"context"
	"errors"

	"github.com/blitz-go/blitz/internal/iodriver"
	"github.com/blitz-go/blitz/scheduler"
)

// The scheduler's outcomes, re-exported so that users need import only this
// package. A JoinHandle's error matches one of them (a panic matches
// ErrPanicked and is a *PanicError).
var (
	ErrShutdown     = scheduler.ErrShutdown
	ErrCancelled    = scheduler.ErrCancelled
	ErrPanicked     = scheduler.ErrPanicked
	ErrBackpressure = scheduler.ErrBackpressure
	ErrDetached     = scheduler.ErrDetached
	// ErrNilFuture answers a nil future given to BlockOn (its error),
	// Spawn, SpawnOn, TrySpawnOn, SpawnBlocking or Blocking (the error of
	// the JoinHandle or of the future's result). It is future.ErrNilFuture,
	// the panic value of the future package's combinators given a nil
	// future, so errors.Is matches it wherever it came from.
	ErrNilFuture = scheduler.ErrNilFuture
	// ErrBlockingInTask is the error of a call that would block a worker,
	// made from inside a task: BlockOn or JoinHandle.Wait that would have
	// to wait, Coordinator.Wait before the drain, Shutdown before the
	// shutdown finished. A task polls the future (the handle, Drained)
	// instead.
	ErrBlockingInTask = scheduler.ErrBlockingInTask
)

var (
	// ErrTimeout is the error of a Timeout or Deadline whose time ran out
	// before the future completed, and is wrapped by the error of an I/O
	// operation whose timeout ran out (which also matches
	// os.ErrDeadlineExceeded). It matches context.DeadlineExceeded with
	// errors.Is, so code that checks for a context's deadline handles a
	// runtime timeout the same way; errors.Is(err, ErrTimeout) stays the
	// test for a timeout of this package. Its Timeout method reports true.
	ErrTimeout error = timeoutSentinel{}
	// ErrNoRuntime is the panic value of Spawn given a Context that no
	// runtime polls.
	ErrNoRuntime = errors.New("blitz: context has no runtime")
	// ErrConfig is wrapped by New's error for an invalid Config.
	ErrConfig = errors.New("blitz: invalid config")
	// ErrZeroHandle is the panic value of a method of the zero Handle.
	ErrZeroHandle = errors.New("blitz: zero Handle")
	// ErrBackend is wrapped by New's error when the I/O backend cannot
	// start: a forced backend this platform or kernel lacks, or the
	// automatic choice finding none that works. The backend's own error is
	// wrapped too.
	ErrBackend = iodriver.ErrBackend
)

// PanicError is a task's panic as its JoinHandle reports it.
type PanicError = scheduler.PanicError

var (
	// ErrNoSignals is the error of Signals and Signal given no signal.
	ErrNoSignals = errors.New("blitz: no signals to listen for")
	// ErrSignalStreamClosed is wrapped by the error of a receive from a
	// closed SignalStream (and of a one-shot SignalFuture whose runtime, the
	// first that polled it, shut down).
	ErrSignalStreamClosed = errors.New("blitz: signal stream closed")
	// ErrShuttingDown is wrapped by the error of Coordinator.Guard after
	// the coordinator was triggered: no new work is admitted.
	ErrShuttingDown = errors.New("blitz: shutting down")
	// ErrShutdownTimeout is wrapped by the error of Coordinator.Wait and
	// of a DrainFuture whose time ran out with work still in flight.
	ErrShutdownTimeout = errors.New("blitz: shutdown timed out with work in flight")
)

// timeoutSentinel is the type of ErrTimeout: a comparable value (so that
// errors.Is matches ErrTimeout itself by ==) whose Is also matches
// context.DeadlineExceeded. Only ErrTimeout is made of it.
type timeoutSentinel struct{}

// Error returns the message of ErrTimeout.
func (timeoutSentinel) Error() string { return "blitz: timeout" }

// Is reports whether target is context.DeadlineExceeded, the other error
// ErrTimeout matches.
func (timeoutSentinel) Is(target error) bool { return target == context.DeadlineExceeded }

// Timeout reports true, as net.Error's Timeout and context.DeadlineExceeded's
// do.
func (timeoutSentinel) Timeout() bool { return true }
