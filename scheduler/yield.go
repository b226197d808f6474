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
// first poll wakes its own task and returns not-ready, so the task goes to
// the back of its worker's local queue (not the LIFO slot) and is polled
// again after the tasks already waiting; its second poll completes.
func Yield() future.Future[struct{}] { return &YieldFuture{} }

// Poll implements the yield; see Yield.
func (y *YieldFuture) Poll(cx *future.Context) (struct{}, bool) {
	if y.yielded {
		return struct{}{}, true
	}
	y.yielded = true
	cx.Waker().Wake()
	return struct{}{}, false
}

// Reset makes the future yield again on its next poll.
func (y *YieldFuture) Reset() { y.yielded = false }
