package waker

import "errors"

// Misuse panics with one of the errors below as the panic value (wrapped with
// %w where a detail helps), so that a test or a supervisor that recovers can
// match it with errors.Is. Nothing on a correct program's path panics: see
// "Misuse" in the package documentation.
var (
	// ErrNilWakeable is the panic value when New is given a nil Wakeable or
	// Func a nil function.
	ErrNilWakeable = errors.New("waker: nil Wakeable")

	// ErrIncomparable is the panic value when New is given a Wakeable whose
	// dynamic type is not comparable (a slice, a map, a func, or a struct
	// holding one): such a Waker could not be compared by WillWake or ==.
	// Use a pointer.
	ErrIncomparable = errors.New("waker: Wakeable of an incomparable type (use a pointer)")

	// ErrNilWaiter is the panic value when a List method is given a nil
	// *Waiter.
	ErrNilWaiter = errors.New("waker: nil waiter")

	// ErrWaiterLinked is the panic value when PushBack or PushFront is given a
	// waiter that is already linked, in this list or another one.
	ErrWaiterLinked = errors.New("waker: push of a waiter that is already linked")

	// ErrForeignWaiter is the panic value when Remove is given a waiter that
	// is linked in another list.
	ErrForeignWaiter = errors.New("waker: remove of a waiter linked in another list")

	// ErrWakeListFull is the panic value when WakeList.Push is called on a
	// full WakeList; check CanPush first.
	ErrWakeListFull = errors.New("waker: push into a full WakeList")
)
