package syncprim

import "errors"

// ErrClosed reports a primitive that was closed (Semaphore.Close): pending
// and later acquires fail with it. Types with errors of their own define them
// next to the type.
var ErrClosed = errors.New("syncprim: closed")

// ErrGuardReleased is the panic value of releasing a guard that was already
// released: a second Unlock (or a Downgrade after an Unlock) of a MutexGuard,
// ReadGuard or WriteGuard, or a second Release of a Permit, made through the
// guard or through a copy of it. The lock or semaphore is left as it was: a
// holder that has it since keeps it, and no permit is added.
var ErrGuardReleased = errors.New("syncprim: guard already released")
