package scheduler

import "github.com/blitz-go/blitz/future"

// YieldFuture is the future of Yield. Its zero value is ready to use and it
// can be embedded in a hand-written future to yield without allocating;
// Reset makes it yield again.
type YieldFuture struct {
	// yielded is set by the first poll. Owned by whoever polls the future.
	yielded bool
}

// Yield returns a future that gives the worker to the other tasks once: its
// first poll wakes its own task as a yield (future.Context.Yield) and returns
// not-ready, so the worker sets the task aside and polls it again only after
// it has run every other task it can run without stealing and has run its
// driver (collected I/O completions, fired due timers): a task yielding in
// a loop lets a pending accept or read through at the next yield. The
// second poll completes. Outside a scheduler the first poll wakes the
// task's waker.
func Yield() future.Future[struct{}] { return &YieldFuture{} }

// Poll implements the yield; see Yield.
func (y *YieldFuture) Poll(cx *future.Context) (struct{}, bool) {
	if y.yielded {
		return struct{}{}, true
	}
	y.yielded = true
	cx.Yield()
	return struct{}{}, false
}

// Reset makes the future yield again on its next poll.
func (y *YieldFuture) Reset() { y.yielded = false }
