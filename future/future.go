package future

import "github.com/blitz-go/blitz/waker"

// Future is a computation that completes later. Poll advances it: it returns
// the value and true when the future is complete, or the zero value and false
// when it is not, in which case it has arranged for cx.Waker() (or a Waker
// that will wake the same task) to be woken when polling again can make
// progress. Returning false without that arrangement is a lost wakeup. See the
// package doc, "The poll contract".
//
// After Poll has returned true the future is finished; polling it again is a
// misuse whose outcome the future defines (the futures of this package
// panic with ErrPolledAfterCompletion, and with ErrPolledAfterCancel when
// polled after Cancel). Poll is called by the future's owner only, one call
// at a time: see "The poll contract" in the package documentation.
type Future[T any] interface {
	Poll(cx *Context) (T, bool)
}

// Canceler is implemented by every future that registers something outside
// itself (a waiter node, a timer entry, an in-flight operation, a child
// future that does). Cancel deregisters all of it at once, so that nothing
// outside the future refers to it afterwards, and releases what the future
// was handed but had not yet delivered (a permit passes on; a received value
// is returned to its source or, where that is impossible, documented as
// dropped). It is idempotent, it may be called whether or not the future was
// ever polled, and a cancelled future is never polled again. Cancel is called
// by whoever abandons the future: a combinator that no longer needs it (select,
// race, timeout, a failing join), the scheduler when it drops a task, the
// owner of a future it stops polling. See the package doc, "Cancellation".
type Canceler interface {
	Cancel()
}

// Cancel cancels f if it implements Canceler and does nothing otherwise: a
// future that registers nothing outside itself has nothing to undo. Callers
// that abandon a future of unknown type call Cancel rather than asserting.
func Cancel(f any) {
	if c, ok := f.(Canceler); ok {
		c.Cancel()
	}
}

// Executor is what polls a future: the scheduler of a runtime, or nothing
// (a nil Executor) when a goroutine polls with NewContext. Futures of this
// module only use WakeLocal, through Context.Wake; the runtime module reaches
// its timers and I/O driver through Services.
type Executor interface {
	// WakeLocal wakes w as part of the poll that cx belongs to, preferring
	// the polling worker's own queues (its LIFO slot) to the global queue,
	// which a thread-local "current worker" would serve elsewhere. It
	// reports false when it did not wake w (w is not one of this executor's
	// tasks, or cx is not a worker's), so that the caller wakes w itself.
	WakeLocal(cx *Context, w waker.Waker) bool
	// Services returns the runtime services (timers, I/O) of the runtime
	// that owns this executor, or nil. Its dynamic type belongs to the
	// runtime module.
	Services() any
}

// Result is a value or the error that stands in for it: the output of a
// future that can fail, as the try-combinators and a JoinHandle produce it.
type Result[T any] struct {
	Value T
	Err   error
}

// Ok returns the Result holding v.
func Ok[T any](v T) Result[T] { return Result[T]{Value: v} }

// Fail returns the Result holding err.
func Fail[T any](err error) Result[T] { return Result[T]{Err: err} }

// Get returns the value and the error, for the usual Go two-value check.
func (r Result[T]) Get() (T, error) { return r.Value, r.Err }

// Movable is implemented, through its pointer, by a future type F whose
// value may be copied until its first Poll: its constructor returns a new
// *F, registers nothing and keeps no pointer to it, so that whoever awaits
// it may hold an F by value and poll it in place. The futures that the
// channels and syncprim packages return are Movable.
//
// The generator relies on it: an await of a call that returns a Movable
// *F, such as future.Try(ch.Recv()), holds an F in the state machine,
// copied out of the new pointer (f.recv = *ch.Recv()), and polls it there;
// when the constructor is inlined, the compiler sees that the pointer does
// not escape and the await allocates nothing. A hand-written future may do
// the same with a field of type F. Copying after the first Poll is a
// misuse: a waiting F is linked into its primitive's wait list by address.
type Movable interface {
	// MovableBeforePoll does nothing: it marks the type.
	MovableBeforePoll()
}
