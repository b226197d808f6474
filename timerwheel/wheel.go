package timerwheel

// Wheel is the hierarchical timer wheel: six levels of 64 slots, an overflow
// list, a due list and a firing list (see "Layout"). It counts in integer
// ticks and reads no clock: time moves only when its owner calls Advance.
//
// A zero Wheel is valid and stands at tick 0; NewWheel starts one elsewhere.
// A Wheel is not safe for concurrent use: one owner (a goroutine, or whoever
// holds the lock that guards it) calls every method. It must not be copied
// after first use.
type Wheel[T any] struct {
	// now is the tick the wheel stands at: every tick up to and including
	// now has been walked by Advance. Owner only.
	now uint64
	// count is the number of pending entries. Owner only.
	count int
	// levels hold the entries whose deadline is after now and shares
	// now's 2^36-tick block. Owner only.
	levels [numLevels]level[T]
	// overflow holds the entries whose deadline lies in a later block.
	// Owner only.
	overflow *Entry[T]
	// due holds the entries inserted with a deadline at or before now; the
	// next Advance fires them first. Owner only.
	due *Entry[T]
	// firing holds the entries the running Advance has reached and not yet
	// handed to fire. Owner only.
	firing *Entry[T]
	// advancing is true while Advance runs, to refuse reentry. Owner only.
	advancing bool
}

// NewWheel returns an empty Wheel standing at tick start.
// Anyone may call it; the caller owns the result.
func NewWheel[T any](start uint64) *Wheel[T] {
	return &Wheel[T]{now: start}
}

// Now returns the tick the wheel stands at: the largest tick passed to
// Advance (or the start tick). Inside a fire callback it is the tick the walk
// has reached, which equals the fired entry's deadline unless the entry was
// due (see "Firing order").
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) Now() uint64 { return w.now }

// Len returns the number of pending entries.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) Len() int { return w.count }

// Insert schedules the idle entry e to fire at tick deadline. A deadline at or
// before Now makes e due: it fires at the next Advance, whatever tick that
// Advance is given. Insert is O(1) and allocates nothing.
//
// Insert panics with ErrNilEntry if e is nil, ErrEntryPending if e is already
// pending in w, and ErrForeignEntry if e is pending in another Wheel.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) Insert(e *Entry[T], deadline uint64) {
	w.checkOwner(e)
	if e.wheel != nil {
		panic(ErrEntryPending)
	}
	e.wheel = w
	e.deadline = deadline
	w.count++
	w.link(e)
}

// Cancel removes e from the wheel. It returns true if e was pending and will
// now not fire, false if e was idle: never inserted, already fired (including
// an entry whose fire callback is running) or already cancelled. Cancel is
// O(1) and allocates nothing. It may be called from a fire callback, on any
// entry of the wheel, including one that the same Advance was about to fire.
//
// Cancel panics with ErrNilEntry if e is nil and ErrForeignEntry if e is
// pending in another Wheel.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) Cancel(e *Entry[T]) bool {
	w.checkOwner(e)
	if e.wheel == nil {
		return false
	}
	w.unlink(e)
	e.wheel = nil
	w.count--
	return true
}

// Reset moves e to fire at tick deadline, whether e was pending in w or idle,
// and reports whether it was pending (true means its previous schedule was
// replaced; false means it was idle and Reset acted as Insert). The same rules
// as Insert apply to deadline. Reset is O(1) and allocates nothing.
//
// Reset panics with ErrNilEntry if e is nil and ErrForeignEntry if e is
// pending in another Wheel.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) Reset(e *Entry[T], deadline uint64) bool {
	w.checkOwner(e)
	wasPending := e.wheel != nil
	if wasPending {
		w.unlink(e)
	} else {
		e.wheel = w
		w.count++
	}
	e.deadline = deadline
	w.link(e)
	return wasPending
}

// Advance walks the wheel forward to tick now and hands every entry whose
// deadline it reaches to fire, one at a time, in the order given in "Firing
// order", and returns how many it handed over. The entries that are due fire
// first. A now at or before Now fires only the due entries and leaves the
// wheel where it stands: time never moves backwards.
//
// Each entry is idle when fire sees it, so fire may Insert or Reset it again,
// and may Insert, Reset or Cancel any other entry of w; see "Firing order"
// for when such entries fire. fire may be nil. fire must not call Advance
// (that panics with ErrReentrantAdvance). If fire panics, the wheel stays
// consistent and the entries the walk had reached but not handed over fire
// at the next Advance.
//
// Advance costs O(1) per fired entry plus O(1) per cascaded entry (each
// entry cascades at most once per level) plus one step per occupied slot
// passed; a jump over an empty stretch of ticks costs nothing more.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) Advance(now uint64, fire func(*Entry[T])) int {
	if w.advancing {
		panic(ErrReentrantAdvance)
	}
	w.advancing = true
	defer w.endAdvance()
	w.moveDueToFiring()
	n := w.fireAll(fire)
	for w.step(now) {
		n += w.fireAll(fire)
	}
	if now > w.now {
		w.now = now
	}
	return n
}

// NextExpiry returns a tick at or before the earliest pending deadline, and
// false when no entry is pending. Advance to any tick before the result fires
// nothing. The result is Now when an entry is due, and otherwise after Now.
//
// It is exact (the earliest pending deadline itself) when that deadline lies
// in the same 64-tick ring as Now (level 0), or when every pending entry
// lies beyond Now's 2^36-tick block (the overflow list, which it scans). Else
// it is the first tick of the slot that holds the earliest entry: a lower
// bound at which Advance cascades that slot. See "Next expiry".
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) NextExpiry() (uint64, bool) {
	if w.count == 0 {
		return 0, false
	}
	if w.due != nil || w.firing != nil {
		return w.now, true
	}
	if lvl, slot, ok := w.nextSlot(); ok {
		return slotStart(w.now, lvl, slot), true
	}
	return w.overflowMin(), true
}

// CancelAll cancels every pending entry, calls f (if not nil) with each, and
// returns how many there were. Each entry is idle when f sees it. f may call
// Cancel; it must not call Insert, Reset or Advance on w.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) CancelAll(f func(*Entry[T])) int {
	n := 0
	for lvl := range w.levels {
		lv := &w.levels[lvl]
		for lv.occupied != 0 {
			s := firstSlot(lv.occupied)
			e := lv.slots[s]
			lv.unlink(s, e)
			w.release(e, f)
			n++
		}
	}
	for _, head := range []**Entry[T]{&w.overflow, &w.due, &w.firing} {
		for e := popEntry(head); e != nil; e = popEntry(head) {
			w.release(e, f)
			n++
		}
	}
	return n
}

// checkOwner panics unless e is non-nil and idle or pending in w.
// The owner of the Wheel calls it.
func (w *Wheel[T]) checkOwner(e *Entry[T]) {
	if e == nil {
		panic(ErrNilEntry)
	}
	if e.wheel != nil && e.wheel != w {
		panic(ErrForeignEntry)
	}
}

// link files e, whose deadline is set, into the list it belongs to relative
// to now: due, a level slot or overflow.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) link(e *Entry[T]) {
	if e.deadline <= w.now {
		e.loc = locDue
		pushEntry(&w.due, e)
		return
	}
	w.linkFuture(e)
}

// linkFuture files e, whose deadline is after now, into a level slot or the
// overflow list.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) linkFuture(e *Entry[T]) {
	lvl := levelFor(w.now, e.deadline)
	if lvl >= numLevels {
		e.loc = locOverflow
		pushEntry(&w.overflow, e)
		return
	}
	e.loc = locLevel0 + location(lvl)
	w.levels[lvl].push(slotFor(e.deadline, lvl), e)
}

// unlink removes the pending entry e from whichever list holds it.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) unlink(e *Entry[T]) {
	switch loc := e.loc; {
	case loc >= locLevel0 && loc < locOverflow:
		lvl := int(loc - locLevel0)
		w.levels[lvl].unlink(slotFor(e.deadline, lvl), e)
	case loc == locOverflow:
		unlinkEntry(&w.overflow, e)
	case loc == locDue:
		unlinkEntry(&w.due, e)
	case loc == locFiring:
		unlinkEntry(&w.firing, e)
	default:
		panic("timerwheel: unlink: pending entry in no list")
	}
	e.loc = locIdle
}

// endAdvance clears the reentry guard, also when fire panics.
// The owner of the Wheel calls it.
func (w *Wheel[T]) endAdvance() { w.advancing = false }

// moveDueToFiring hands the due entries to the current Advance. Entries made
// due by its fire callbacks land in the emptied due list and wait for the
// next Advance.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) moveDueToFiring() {
	for e := popEntry(&w.due); e != nil; e = popEntry(&w.due) {
		e.loc = locFiring
		pushEntry(&w.firing, e)
	}
}

// fireAll makes each entry of the firing list idle and hands it to fire,
// until the list is empty, and returns how many it handed over.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) fireAll(fire func(*Entry[T])) int {
	n := 0
	for e := popEntry(&w.firing); e != nil; e = popEntry(&w.firing) {
		n++
		w.release(e, fire)
	}
	return n
}

// step moves the wheel to its next event if that event is at or before
// target, and reports whether it did. The next event is the first occupied
// slot of the lowest non-empty level, which the step empties (entries whose
// deadline it reaches go to the firing list, the rest cascade to lower
// levels); or, when the levels are empty, the start of the block that holds
// the earliest overflow entry, whose list the step files again. See
// "Cascading" and "The overflow list".
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) step(target uint64) bool {
	if lvl, slot, ok := w.nextSlot(); ok {
		start := slotStart(w.now, lvl, slot)
		if start > target {
			return false
		}
		w.now = start
		w.refile(w.levels[lvl].take(slot))
		return true
	}
	if w.overflow == nil {
		return false
	}
	block := w.overflowMin() &^ blockMask
	if block > target {
		return false
	}
	w.now = block
	head := w.overflow
	w.overflow = nil
	w.refile(head)
	return true
}

// nextSlot returns the lowest non-empty level and its first occupied slot.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) nextSlot() (lvl, slot int, ok bool) {
	for lvl := range w.levels {
		lv := &w.levels[lvl]
		if lv.occupied == 0 {
			continue
		}
		slot, ok := lv.nextSlot(w.now, lvl)
		if !ok {
			panic("timerwheel: nextSlot: occupied slot at or before now")
		}
		return lvl, slot, true
	}
	return 0, 0, false
}

// refile files again every entry of the detached list head relative to the
// new now: an entry whose deadline now has reached goes to the firing list,
// any other to the level (or overflow) it belongs to.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) refile(head *Entry[T]) {
	for e := head; e != nil; {
		next := e.next
		e.next, e.prev = nil, nil
		if e.deadline <= w.now {
			e.loc = locFiring
			pushEntry(&w.firing, e)
		} else {
			w.linkFuture(e)
		}
		e = next
	}
}

// overflowMin returns the earliest deadline in the non-empty overflow list.
// It scans the list: see "The overflow list".
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) overflowMin() uint64 {
	m := w.overflow.deadline
	for e := w.overflow.next; e != nil; e = e.next {
		m = min(m, e.deadline)
	}
	return m
}

// release makes the unlinked entry e idle and calls f (if not nil) with it.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (w *Wheel[T]) release(e *Entry[T], f func(*Entry[T])) {
	e.loc = locIdle
	e.wheel = nil
	w.count--
	if f != nil {
		f(e)
	}
}
