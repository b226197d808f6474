package future

// phase is the lifecycle of a future of this package: pending until it
// returns its value (done) or is cancelled, and never anything else after
// that. Each future's phase is written and read by the future's owner only
// (the goroutine making the Poll or Cancel call), so it needs no atomics.
type phase uint8

const (
	phasePending   phase = iota // may be polled and cancelled
	phaseDone                   // returned its value; Poll panics, Cancel is a no-op
	phaseCancelled              // cancelled; Poll panics, Cancel is a no-op
)

// checkPoll panics with the sentinel for a future that may not be polled
// any more. Poll methods call it first.
func (p phase) checkPoll() {
	switch p {
	case phaseDone:
		panic(ErrPolledAfterCompletion)
	case phaseCancelled:
		panic(ErrPolledAfterCancel)
	}
}

// mustFuture panics with ErrNilFuture if f is nil. Constructors call it on
// each child so that a nil child fails where it was passed, not at a poll.
func mustFuture[T any](f Future[T]) {
	if f == nil {
		panic(ErrNilFuture)
	}
}
