package timerwheel

import "fmt"

// LevelFor exposes levelFor to the tests.
func LevelFor(now, deadline uint64) int { return levelFor(now, deadline) }

// Where names the list e is linked into: "idle", "level0".."level5",
// "overflow", "due" or "firing".
func Where[T any](e *Entry[T]) string {
	switch loc := e.loc; {
	case loc == locIdle:
		return "idle"
	case loc < locOverflow:
		return fmt.Sprintf("level%d", loc-locLevel0)
	case loc == locOverflow:
		return "overflow"
	case loc == locDue:
		return "due"
	default:
		return "firing"
	}
}

// CheckInvariants verifies the invariants of "Layout" and returns the first
// violation found.
func (w *Wheel[T]) CheckInvariants() error {
	n := 0
	for lvl := range w.levels {
		lv := &w.levels[lvl]
		for s, head := range lv.slots {
			if (head != nil) != (lv.occupied&(1<<uint(s)) != 0) {
				return fmt.Errorf("level %d slot %d: occupied bit disagrees with list", lvl, s)
			}
			err := w.checkList(head, locLevel0+location(lvl), func(e *Entry[T]) error {
				if slotFor(e.deadline, lvl) != s {
					return fmt.Errorf("deadline %d in level %d slot %d, want slot %d", e.deadline, lvl, s, slotFor(e.deadline, lvl))
				}
				if e.deadline <= w.now || levelFor(w.now, e.deadline) != lvl {
					return fmt.Errorf("deadline %d at level %d, now %d: belongs to level %d", e.deadline, lvl, w.now, levelFor(w.now, e.deadline))
				}
				return nil
			}, &n)
			if err != nil {
				return err
			}
		}
	}
	if err := w.checkList(w.overflow, locOverflow, func(e *Entry[T]) error {
		if e.deadline <= w.now || levelFor(w.now, e.deadline) < numLevels {
			return fmt.Errorf("deadline %d in overflow, now %d", e.deadline, w.now)
		}
		return nil
	}, &n); err != nil {
		return err
	}
	if err := w.checkList(w.due, locDue, func(e *Entry[T]) error {
		if e.deadline > w.now {
			return fmt.Errorf("deadline %d due, now %d", e.deadline, w.now)
		}
		return nil
	}, &n); err != nil {
		return err
	}
	if err := w.checkList(w.firing, locFiring, func(*Entry[T]) error { return nil }, &n); err != nil {
		return err
	}
	if n != w.count {
		return fmt.Errorf("count %d, lists hold %d", w.count, n)
	}
	return nil
}

func (w *Wheel[T]) checkList(head *Entry[T], loc location, check func(*Entry[T]) error, n *int) error {
	var prev *Entry[T]
	for e := head; e != nil; e = e.next {
		if e.prev != prev {
			return fmt.Errorf("broken prev link")
		}
		if e.wheel != w || e.loc != loc {
			return fmt.Errorf("entry with deadline %d: wheel or loc %d wrong, want loc %d", e.deadline, e.loc, loc)
		}
		if err := check(e); err != nil {
			return err
		}
		*n++
		prev = e
	}
	return nil
}

// DriverWakes returns how many times the drivers of svc have run their loop,
// summed over the shards.
func (svc *Service) DriverWakes() uint64 {
	var n uint64
	for _, s := range svc.shards {
		n += s.wakes.Load() // statistics; partner: the Add in drive
	}
	return n
}
