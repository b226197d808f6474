package future

import "errors"

// Misuse panics with one of the errors below as the panic value, so that a
// test or a supervisor that recovers can match it with errors.Is; a call
// that returns an error (Block) returns it instead. Nothing on a correct
// program's path panics: see "The poll contract" and "Cancellation" in the
// package documentation.
var (
	// ErrPolledAfterCompletion is the panic value of a future of this
	// package polled again after it returned its value.
	ErrPolledAfterCompletion = errors.New("future: polled after completion")

	// ErrPolledAfterCancel is the panic value of a future of this package
	// polled after it was cancelled: a cancelled future is never polled
	// again (see "Cancellation").
	ErrPolledAfterCancel = errors.New("future: polled after cancel")

	// ErrEmpty is the panic value of Race and Select given no futures:
	// such a race could never complete, so it is refused at construction.
	ErrEmpty = errors.New("future: race or select of no futures")

	// ErrNilFuture is the panic value of a combinator given a nil future or
	// a nil function (its future has no room for an error), and of Then
	// when its function returns a nil future; Block returns it as its
	// error. The scheduler and runtime packages use this same value for
	// their nil-future misuses, so errors.Is matches it whichever package
	// reported it.
	ErrNilFuture = errors.New("future: nil future or function")
)
