package wsqueue

import "errors"

// ErrCapacity reports a capacity that [NewSize] cannot use: not a power of
// two, below 2, or above 2^31. It is returned wrapped with the offending value;
// test for it with [errors.Is].
var ErrCapacity = errors.New("wsqueue: invalid capacity")

// The panic values of misuse, which no method can return as an error: a
// nil item pushed ([ErrNilItem]), a local queue that overflows with no
// overflow given ([ErrNilOverflow]), a queue stolen into itself
// ([ErrStealSelf]). A broken invariant of the queue's own protocol panics
// with an error wrapping [ErrInvariant]. Recover and test them with
// [errors.Is].
var (
	ErrNilItem     = errors.New("wsqueue: push of nil item")
	ErrNilOverflow = errors.New("wsqueue: queue full and overflow is nil")
	ErrStealSelf   = errors.New("wsqueue: steal into the queue being stolen from")
	ErrInvariant   = errors.New("wsqueue: broken invariant")
)
