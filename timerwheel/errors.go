package timerwheel

import "errors"

// Misuse of the core Wheel and of the Service panics with one of the errors
// below as the panic value, so that a test or a supervisor that recovers can
// match it with errors.Is. Nothing on a correct program's path panics: see
// "Misuse" in the package documentation.
var (
	// ErrNilEntry is the panic value when a nil *Entry is passed to Insert,
	// Reset or Cancel.
	ErrNilEntry = errors.New("timerwheel: nil entry")

	// ErrForeignEntry is the panic value when an entry that is pending in one
	// Wheel is passed to Insert, Reset or Cancel of another Wheel.
	ErrForeignEntry = errors.New("timerwheel: entry is pending in another wheel")

	// ErrEntryPending is the panic value when Insert is given an entry that is
	// already pending in the same Wheel. Reset moves a pending entry.
	ErrEntryPending = errors.New("timerwheel: Insert of an entry that is already pending (use Reset)")

	// ErrReentrantAdvance is the panic value when Advance is called from inside
	// a fire callback of the same Wheel.
	ErrReentrantAdvance = errors.New("timerwheel: Advance called from inside a fire callback")

	// ErrNilFunc is the panic value when Service.AfterFunc is given a nil
	// function.
	ErrNilFunc = errors.New("timerwheel: AfterFunc with a nil func")

	// ErrUninitializedService is the panic value when a method is called on a
	// Service that was not returned by NewService.
	ErrUninitializedService = errors.New("timerwheel: Service used without NewService")

	// ErrUninitializedTimer is the panic value when Stop or Reset is called on
	// a Timer that was not returned by Service.AfterFunc.
	ErrUninitializedTimer = errors.New("timerwheel: Stop or Reset called on an uninitialized Timer")
)

// ErrClosed is returned by Service.Close when the Service was already closed.
// It is an ordinary error value, not a panic.
var ErrClosed = errors.New("timerwheel: service closed")
