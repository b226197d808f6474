package runtime

import (
	"errors"

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
)

var (
	// ErrTimeout is the error of a Timeout or Deadline whose time ran out
	// before the future completed.
	ErrTimeout = errors.New("runtime: timeout")
	// ErrNoRuntime is the panic value of Spawn given a Context that no
	// runtime polls.
	ErrNoRuntime = errors.New("runtime: context has no runtime")
	// ErrConfig is wrapped by New's error for an invalid Config.
	ErrConfig = errors.New("runtime: invalid config")
	// ErrZeroHandle is the panic value of a method of the zero Handle.
	ErrZeroHandle = errors.New("runtime: zero Handle")
	// ErrBackend is wrapped by New's error when the I/O backend cannot
	// start: a forced backend this platform or kernel lacks, or the
	// automatic choice finding none that works. The backend's own error is
	// wrapped too.
	ErrBackend = errors.New("runtime: I/O backend unavailable")
)

// PanicError is a task's panic as its JoinHandle reports it.
type PanicError = scheduler.PanicError
