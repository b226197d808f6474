package channels

import (
	"errors"
	"fmt"
)

// Errors shared by every channel of the package. Each is a sentinel: compare
// with errors.Is, since a blocking call wraps them with context.
var (
	// ErrClosed reports a channel that is closed: a send to it fails, and a
	// receive fails once everything sent before the close was received.
	ErrClosed = errors.New("channels: closed")
	// ErrFull reports that a TrySend found no room; nothing was sent.
	ErrFull = errors.New("channels: full")
	// ErrEmpty reports that a TryRecv found nothing to receive yet.
	ErrEmpty = errors.New("channels: empty")
	// ErrCapacity is the panic value of a constructor given a capacity
	// below 1.
	ErrCapacity = errors.New("channels: capacity must be at least 1")
)

// SendError is the error of a send that was handed its value (a send future,
// a blocking send) and could not deliver it: the value comes back in Value,
// and Err says why (ErrClosed, or the context's error for a blocking send).
// Nothing a caller sends is lost: it is either received exactly once or
// returned here. errors.Is(err, ErrClosed) and errors.As(err, &se) both work.
//
// Synchronous sends (TrySend, and the sends that never wait) return the bare
// sentinel instead, allocation-free: their caller still holds the value.
type SendError[T any] struct {
	Value T     // the value that was not delivered
	Err   error // why: ErrClosed or a context error
}

// Error describes the failure without the value, which may be large.
func (e *SendError[T]) Error() string {
	return fmt.Sprintf("channels: send not delivered: %v", e.Err)
}

// Unwrap returns Err, so that errors.Is sees the cause.
func (e *SendError[T]) Unwrap() error { return e.Err }
