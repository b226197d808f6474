package timerwheel

// location says which list of its Wheel an entry is linked into. The zero
// value, locIdle, means the entry is in no list: never inserted, fired or
// cancelled.
type location uint8

const (
	locIdle     location = 0                     // not pending; Entry.wheel is nil
	locLevel0   location = 1                     // locLevel0+L: a slot of level L, 0 <= L < numLevels
	locOverflow location = locLevel0 + numLevels // the overflow list
	locDue      location = locOverflow + 1       // deadline at or before Now when inserted; fires at the next Advance
	locFiring   location = locDue + 1            // reached by the current Advance, about to be handed to fire
)

// Entry is one timer of a Wheel[T]. It is intrusive: the list links live in
// the Entry itself, so a caller embeds an Entry in its own struct and Insert,
// Cancel and Reset allocate nothing. Value is the caller's and the wheel never
// reads or writes it; it is how the fire callback gets back to the embedding
// struct (see "Getting back to the caller's struct" in the package doc).
//
// The zero Entry is ready to use and idle. An Entry must not be copied while
// it is pending.
type Entry[T any] struct {
	// Value is written and read by the caller only.
	Value T

	// next and prev link the entry into one list of wheel. Owner of the
	// Wheel only.
	next, prev *Entry[T]
	// wheel is the Wheel the entry is pending in, nil when idle. Owner only.
	wheel *Wheel[T]
	// deadline is the tick the entry was last inserted or reset for. Owner
	// only.
	deadline uint64
	// loc is the list the entry is linked into. Owner only.
	loc location
}

// Deadline returns the tick the entry was last inserted or reset for; it
// keeps that value after the entry fires or is cancelled.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (e *Entry[T]) Deadline() uint64 { return e.deadline }

// Pending reports whether the entry is inserted in a Wheel and has neither
// fired nor been cancelled.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (e *Entry[T]) Pending() bool { return e.wheel != nil }

// pushEntry links e at the front of the list whose head is *head.
// The owner of the Wheel calls it.
func pushEntry[T any](head **Entry[T], e *Entry[T]) {
	e.prev = nil
	e.next = *head
	if e.next != nil {
		e.next.prev = e
	}
	*head = e
}

// unlinkEntry removes e from the list whose head is *head.
// The owner of the Wheel calls it.
func unlinkEntry[T any](head **Entry[T], e *Entry[T]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		*head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.next, e.prev = nil, nil
}

// popEntry unlinks and returns the first entry of the list whose head is
// *head, or nil when the list is empty.
// The owner of the Wheel calls it.
func popEntry[T any](head **Entry[T]) *Entry[T] {
	e := *head
	if e != nil {
		unlinkEntry(head, e)
	}
	return e
}
