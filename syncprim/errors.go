package syncprim

import "errors"

// ErrClosed reports a primitive that was closed (Semaphore.Close): pending
// and later acquires fail with it. Types with errors of their own define them
// next to the type.
var ErrClosed = errors.New("syncprim: closed")
