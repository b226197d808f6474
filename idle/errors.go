package idle

import "errors"

// Misuse panics with one of the errors below as the panic value (wrapped with
// the offending worker id where there is one), so that a test or a supervisor
// that recovers can match it with errors.Is. A correct caller never triggers
// them: see "Misuse" in the package documentation.
var (
	// ErrWorkerCount is the panic value of [New] when the worker count is
	// below 1 or above [MaxWorkers].
	ErrWorkerCount = errors.New("idle: worker count out of range")

	// ErrWorkerID is the panic value when a worker id is outside [0, n).
	ErrWorkerID = errors.New("idle: worker id out of range")

	// ErrNotSearching is the panic value of [State.TransitionFromSearching],
	// and of [State.PrepareToPark] with searching set, when no searcher is
	// counted: the caller's bookkeeping of its own searching role is wrong.
	ErrNotSearching = errors.New("idle: transition from searching without a searcher")

	// ErrAlreadyPrepared is the panic value of [State.PrepareToPark] for a
	// worker that is already announced and has not called [State.Park].
	ErrAlreadyPrepared = errors.New("idle: PrepareToPark twice without Park")

	// ErrNotPrepared is the panic value of [State.Park] for a worker that has
	// not called [State.PrepareToPark] since its last Park.
	ErrNotPrepared = errors.New("idle: Park without PrepareToPark")

	// errBroken is the panic value when an internal invariant does not hold
	// (a parked bit already set, a second wake token). It means a bug in this
	// package, or the same worker id used by two goroutines at once.
	errBroken = errors.New("idle: broken invariant")
)
