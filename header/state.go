package header

import "fmt"

// State is one value of the packed 64-bit state word, laid out as follows
// (bit 0 is the least significant):
//
//	 63            40 39      32 31  29 28 27  26  25  24 23       16 15        0
//	+----------------+----------+------+---+---+---+---+---+-----------+-----------+
//	| ref count (24) |shield (8)| rsvd |jw |det|join|can|ntf| lifecycle | polls (16)|
//	+----------------+----------+------+---+---+---+---+---+-----------+-----------+
//
// polls counts the transitions to Running (TransitionToRunning), modulo
// 2^16: the task's polls, which an executor may show, counted by the
// compare-and-swap that starts each poll at no further cost.
//
// State is a plain value: reading its fields is free, and only Header's
// transitions move the word itself.
type State uint64

// Lifecycle is where a task is in its life; see the package doc, "Lifecycle".
type Lifecycle uint8

// The lifecycles, in their numeric order.
const (
	// Idle: not queued, not running; waiting for a wake.
	Idle Lifecycle = iota
	// Scheduled: in a run queue (or about to be pushed to one).
	Scheduled
	// Running: a worker is polling it.
	Running
	// Complete: finished (its future completed, or it was aborted).
	Complete
)

// String names the lifecycle.
func (l Lifecycle) String() string {
	switch l {
	case Idle:
		return "idle"
	case Scheduled:
		return "scheduled"
	case Running:
		return "running"
	case Complete:
		return "complete"
	}
	return fmt.Sprintf("lifecycle(%d)", uint8(l))
}

// Bit positions and masks of the fields.
const (
	pollsMask      = State(0xffff)
	lifecycleShift = 16
	lifecycleMask  = State(0xff) << lifecycleShift

	notifiedBit     = State(1) << 24
	cancelledBit    = State(1) << 25
	joinInterestBit = State(1) << 26
	detachedBit     = State(1) << 27
	joinWaiterBit   = State(1) << 28

	shieldShift = 32
	shieldMask  = State(0xff) << shieldShift
	shieldOne   = State(1) << shieldShift

	refShift = 40
	refMask  = State(0xffffff) << refShift
	refOne   = State(1) << refShift
)

// Limits of the counted fields.
const (
	// MaxShieldDepth is the deepest nesting of shields.
	MaxShieldDepth = 0xff
	// MaxRefCount is the largest reference count.
	MaxRefCount = 0xffffff
)

// Lifecycle returns the lifecycle field.
func (s State) Lifecycle() Lifecycle { return Lifecycle((s & lifecycleMask) >> lifecycleShift) }

// Polls returns the number of transitions to Running, modulo 2^16.
func (s State) Polls() uint16 { return uint16(s & pollsMask) }

// Notified reports the notified bit: a wake arrived while the task was
// scheduled or running, so it must be polled again.
func (s State) Notified() bool { return s&notifiedBit != 0 }

// Cancelled reports the cancelled bit: cancellation was requested.
func (s State) Cancelled() bool { return s&cancelledBit != 0 }

// JoinInterest reports the join-interest bit: a JoinHandle will collect the
// result.
func (s State) JoinInterest() bool { return s&joinInterestBit != 0 }

// Detached reports the detached bit: the JoinHandle was detached, nobody will
// collect the result.
func (s State) Detached() bool { return s&detachedBit != 0 }

// JoinWaiter reports the join-waiter bit: an awaiter of the JoinHandle
// registered its Waker (Header.SetJoinWaiter), so the completion must wake
// it.
func (s State) JoinWaiter() bool { return s&joinWaiterBit != 0 }

// ShieldDepth returns the number of shields in force.
func (s State) ShieldDepth() int { return int((s & shieldMask) >> shieldShift) }

// RefCount returns the reference count.
func (s State) RefCount() int { return int((s & refMask) >> refShift) }

// CancellationEffective reports whether cancellation takes effect now: it was
// requested and no shield defers it.
func (s State) CancellationEffective() bool {
	return s.Cancelled() && s.ShieldDepth() == 0
}

// withLifecycle returns s with its lifecycle replaced by l.
func (s State) withLifecycle(l Lifecycle) State {
	return s&^lifecycleMask | State(l)<<lifecycleShift
}

// String shows every field, for test failures and debugging.
func (s State) String() string {
	flag := func(on bool, name string) string {
		if on {
			return "|" + name
		}
		return ""
	}
	return fmt.Sprintf("%v%s%s%s%s%s shield=%d ref=%d", s.Lifecycle(),
		flag(s.Notified(), "notified"), flag(s.Cancelled(), "cancelled"),
		flag(s.JoinInterest(), "join"), flag(s.Detached(), "detached"),
		flag(s.JoinWaiter(), "joinwaiter"), s.ShieldDepth(), s.RefCount())
}

// MakeState builds a state word from its fields, for tests and for Init. It
// panics if shield or ref is out of range.
func MakeState(l Lifecycle, notified, cancelled, join, detached bool, shield, ref int) State {
	if shield < 0 || shield > MaxShieldDepth || ref < 0 || ref > MaxRefCount {
		panic(fmt.Sprintf("header: MakeState shield=%d ref=%d out of range", shield, ref))
	}
	s := State(0).withLifecycle(l) | State(shield)<<shieldShift | State(ref)<<refShift
	if notified {
		s |= notifiedBit
	}
	if cancelled {
		s |= cancelledBit
	}
	if join {
		s |= joinInterestBit
	}
	if detached {
		s |= detachedBit
	}
	return s
}
