package wsqueue

import "errors"

// ErrCapacity reports a capacity that [NewSize] cannot use: not a power of
// two, below 2, or above 2^31. It is returned wrapped with the offending value;
// test for it with [errors.Is].
var ErrCapacity = errors.New("wsqueue: invalid capacity")

// Panic messages for misuse. They carry the package prefix, as the standard
// library's and golang.org/x/sync's do.
const (
	msgNilPush     = "wsqueue: push of nil item"
	msgNilOverflow = "wsqueue: queue full and overflow is nil"
	msgStealSelf   = "wsqueue: steal into the queue being stolen from"
)
