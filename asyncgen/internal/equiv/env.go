// Package equiv holds the async functions of the generator's equivalence
// test: each runs generated, as a future, and as a reference, the same
// source with every await blocking on its future, and the two must return
// the same and record the same side effects.
package equiv

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/blitz-go/blitz/future"
)

// Env is what a test function sees: futures whose readiness a seeded random
// schedule decides, and a log of side effects.
type Env struct {
	rng *rand.Rand
	Log []string
	// Live counts the futures made and not yet completed or cancelled;
	// Cancelled counts those cancelled before completing; Made counts
	// every future made.
	Live, Cancelled, Made int
}

// NewEnv returns an Env whose schedule seed decides.
func NewEnv(seed uint64) *Env { return &Env{rng: rand.New(rand.NewPCG(seed, 0x5eed))} }

// Note records a side effect.
func (e *Env) Note(format string, args ...any) { e.Log = append(e.Log, fmt.Sprintf(format, args...)) }

// Val returns a future of v that is pending for a random number of polls
// (waking its task each time, so that a poll follows) before it is ready.
func (e *Env) Val(v int) future.Future[int] {
	e.Live++
	e.Made++
	return &val{e: e, v: v, pending: e.rng.IntN(3)}
}

// Str is Val for a string.
func (e *Env) Str(s string) future.Future[string] {
	return future.Map(e.Val(0), func(int) string { return s })
}

type val struct {
	e       *Env
	v       int
	pending int
	done    bool
}

func (f *val) Poll(cx *future.Context) (int, bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if f.pending > 0 {
		f.pending--
		cx.Wake(cx.Waker())
		return 0, false
	}
	f.done = true
	f.e.Live--
	return f.v, true
}

func (f *val) Cancel() {
	if !f.done {
		f.done = true
		f.e.Live--
		f.e.Cancelled++
	}
}

// ErrOdd is the error of a Fallible future of an odd value.
var ErrOdd = errors.New("odd")

// Fallible is Val for a Result: v with ErrOdd if v is odd (the value is kept
// beside the error, so that a test sees both), v alone if it is even.
func (e *Env) Fallible(v int) future.Future[future.Result[int]] {
	return future.Map(e.Val(v), func(v int) future.Result[int] {
		if v%2 != 0 {
			return future.Result[int]{Value: v, Err: ErrOdd}
		}
		return future.Ok(v)
	})
}

// Text is Fallible for a string: s with ErrOdd if its length is odd.
func (e *Env) Text(s string) future.Future[future.Result[string]] {
	return future.Map(e.Fallible(len(s)), func(r future.Result[int]) future.Result[string] {
		return future.Result[string]{Value: s, Err: r.Err}
	})
}

// Later is Val for any value: a future of v that is pending for a random
// number of polls.
func Later[T any](e *Env, v T) future.Future[T] {
	return future.Map(e.Val(0), func(int) T { return v })
}

// Tick records tag and returns v: a call whose order the log shows.
func (e *Env) Tick(tag string, v int) int {
	e.Note("tick %s", tag)
	return v
}

// Step is Val that records tag when the future is made, so that the log
// shows where an await's operand was evaluated among the calls around it.
func (e *Env) Step(tag string, v int) future.Future[int] {
	e.Note("step %s", tag)
	return e.Val(v)
}

// ValFuture holds a future by value, the way channels and syncprim return
// theirs: its pointer is the future (future.Await(&x)). It must not be
// copied once made (it holds a noCopy, which go vet's copylocks check
// sees), and polling a zero ValFuture panics, so that a test sees an await
// of a future the generated code emptied.
type ValFuture[T any] struct {
	_ noCopy
	f future.Future[T]
}

// ValueOf returns f as a ValFuture.
func ValueOf[T any](f future.Future[T]) ValFuture[T] { return ValFuture[T]{f: f} }

// errZeroValFuture is what polling a zero ValFuture panics with.
var errZeroValFuture = errors.New("equiv: a zero ValFuture polled")

// Poll polls the future held.
func (x *ValFuture[T]) Poll(cx *future.Context) (T, bool) {
	if x.f == nil {
		panic(errZeroValFuture)
	}
	return x.f.Poll(cx)
}

// Cancel cancels the future held, if any.
func (x *ValFuture[T]) Cancel() {
	if x.f != nil {
		future.Cancel(x.f)
	}
}

// Made reports whether x holds a future.
func (x *ValFuture[T]) Made() bool { return x.f != nil }

// MovFuture is a future.Movable: its constructor returns a new pointer,
// as the channels' and syncprim's methods do, and the generated code holds
// it by value (f.aw = *e.Mov(f)). Polling a zero MovFuture panics, so that
// a test sees an await of a future the generated code emptied.
type MovFuture[T any] struct {
	_ noCopy
	f future.Future[T]
}

// MovOf returns f as a new MovFuture.
func MovOf[T any](f future.Future[T]) *MovFuture[T] { return &MovFuture[T]{f: f} }

// MovableBeforePoll marks MovFuture as future.Movable.
func (*MovFuture[T]) MovableBeforePoll() {}

// Poll polls the future held.
func (x *MovFuture[T]) Poll(cx *future.Context) (T, bool) {
	if x.f == nil {
		panic(errZeroValFuture)
	}
	return x.f.Poll(cx)
}

// Cancel cancels the future held, if any.
func (x *MovFuture[T]) Cancel() {
	if x.f != nil {
		future.Cancel(x.f)
	}
}

// noCopy makes go vet's copylocks check report copies of what holds it.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// MaybeFallible is Fallible(v) for an even v, and a nil future for an odd
// one.
func (e *Env) MaybeFallible(v int) future.Future[future.Result[int]] {
	if v%2 != 0 {
		return nil
	}
	return e.Fallible(v)
}

// MaybeVal is Val(v) for v%4 != 2, and a nil future otherwise.
func (e *Env) MaybeVal(v int) future.Future[int] {
	if v%4 == 2 {
		return nil
	}
	return e.Val(v)
}
