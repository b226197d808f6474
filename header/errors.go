package header

import "errors"

var (
	// ErrNilTask is the panic value of Init given a nil Task, or a Task whose
	// Scheduler is nil.
	ErrNilTask = errors.New("header: nil task or scheduler")
	// ErrBadTransition is the panic value of a transition the scheduler must
	// never make (polling a task that is not scheduled, completing one that
	// is not running, dropping a reference nobody holds).
	ErrBadTransition = errors.New("header: transition from a state that forbids it")
	// ErrShieldOverflow is returned by AddShield past MaxShieldDepth.
	ErrShieldOverflow = errors.New("header: too many nested shields")
	// ErrShieldUnderflow is returned by RemoveShield with no shield in force.
	ErrShieldUnderflow = errors.New("header: remove shield without a shield")
	// ErrRefOverflow is returned by Ref past MaxRefCount.
	ErrRefOverflow = errors.New("header: reference count overflow")
)
