package waker

import (
	"fmt"
	"reflect"
)

// Wakeable is what a Waker wakes: a task header (Wake reschedules the task),
// a goroutine's *Signal, a test counter. See "Wakers" in the package
// documentation for the contract: Wake must not block, must be safe to call
// from any goroutine and any number of times, and coalesces with a wake that
// the target has not consumed yet.
type Wakeable interface {
	Wake()
}

// Waker is a handle that wakes one Wakeable. It is a small value (one
// interface word pair), copied freely and comparable with ==; making one with
// New allocates nothing when the Wakeable is a pointer. The zero Waker wakes
// nothing: its Wake is a no-op (see "The zero Waker").
//
// A Waker holds no reference count and needs no clone or drop (see "No clone,
// no drop").
type Waker struct {
	// w is the target, nil for the zero Waker. Set once by New or Func and
	// never written again; the Waker is a value, so every copy is immutable
	// and any goroutine may read it.
	w Wakeable
}

// New returns a Waker that wakes w. It panics with ErrNilWakeable if w is
// nil, and with ErrIncomparable if w's dynamic type is not comparable; w
// should be a pointer, which also makes New allocation-free. A typed nil
// pointer is not detected here: its Wake method is called with a nil
// receiver.
// Any goroutine may call it.
func New(w Wakeable) Waker {
	if w == nil {
		panic(ErrNilWakeable)
	}
	if t := reflect.TypeOf(w); !t.Comparable() {
		panic(fmt.Errorf("%w: %v", ErrIncomparable, t))
	}
	return Waker{w: w}
}

// funcWakeable adapts a func to Wakeable. It is used through a pointer:
// func values are not comparable, pointers are.
type funcWakeable struct {
	// f is set once by Func and read by Wake on any goroutine.
	f func()
}

// Wake calls the function.
func (f *funcWakeable) Wake() { f.f() }

// Func returns a Waker whose Wake calls f. It allocates once, for the
// pointer that makes the Waker comparable; two calls with the same f give
// Wakers that are not equal and for which WillWake reports false. f must
// obey the Wakeable contract: not block, tolerate any goroutine and any
// number of calls. It panics with ErrNilWakeable if f is nil.
// Any goroutine may call it.
func Func(f func()) Waker {
	if f == nil {
		panic(ErrNilWakeable)
	}
	return Waker{w: &funcWakeable{f: f}}
}

// noopWakeable is the target of Noop. It has a non-zero size so that
// pointers to distinct variables would differ; there is only one.
type noopWakeable struct{ _ byte }

// Wake does nothing.
func (*noopWakeable) Wake() {}

// noop is the one target of every Noop Waker. Never written.
var noop = &noopWakeable{}

// Noop returns a Waker whose Wake does nothing, for polling a future once
// outside any task (as Rust's Waker::noop). Unlike the zero Waker it is not
// IsZero, and all Noop Wakers are equal, so WillWake between two of them
// reports true.
// Any goroutine may call it.
func Noop() Waker { return Waker{w: noop} }

// Wake wakes the target: it schedules a task, or makes a Signal's next Wait
// return. It does not block. A wake that finds the target already awake (a
// task already scheduled or running, a Signal with a pending wake) coalesces
// with it. The zero Waker's Wake is a no-op.
// Any goroutine may call it, any number of times.
func (wk Waker) Wake() {
	if wk.w != nil {
		wk.w.Wake()
	}
}

// IsZero reports whether wk is the zero Waker, which wakes nothing.
// Any goroutine may call it.
func (wk Waker) IsZero() bool { return wk.w == nil }

// WillWake reports whether wk and other wake the same target, so that a
// future polled again with other may keep the wk it registered instead of
// replacing it (as Rust's Waker::will_wake). It reports false if either is
// the zero Waker: a zero Waker wakes nothing, so it is always worth
// replacing. It never reports true for different targets.
// Any goroutine may call it.
func (wk Waker) WillWake(other Waker) bool {
	return wk.w != nil && wk.w == other.w
}

// Target returns the Wakeable that wk wakes, nil for the zero Waker. A task
// header uses it to recognise its own Waker.
// Any goroutine may call it.
func (wk Waker) Target() Wakeable { return wk.w }
