package timerwheel

import "math/bits"

// Geometry of the wheel: see "Layout" in the package doc.
const (
	levelBits     = 6                        // log2 of the slots per level
	slotsPerLevel = 1 << levelBits           // 64 slots, one bit each in level.occupied
	slotMask      = slotsPerLevel - 1        // the slot bits of a tick at level 0
	numLevels     = 6                        // levels 0..5
	wheelBits     = levelBits * numLevels    // 36: ticks that differ from now above this go to overflow
	blockMask     = uint64(1)<<wheelBits - 1 // the tick bits the six levels cover
)

// level is one ring of 64 slots. A slot of level L spans 64^L ticks.
type level[T any] struct {
	// occupied has bit s set exactly when slots[s] is non-empty. Owner of
	// the Wheel only.
	occupied uint64
	// slots are the heads of doubly linked lists of entries. Owner only.
	slots [slotsPerLevel]*Entry[T]
}

// levelFor returns the level an entry with the given deadline belongs to
// when the wheel stands at now: the level that holds the highest bit in which
// now and deadline differ (see "Level choice"). A result of numLevels or more
// means the overflow list.
// Pure function; anyone may call it.
func levelFor(now, deadline uint64) int {
	x := (now ^ deadline) | slotMask
	return (bits.Len64(x) - 1) / levelBits
}

// slotFor returns the slot of level lvl that covers tick t.
// Pure function; anyone may call it.
func slotFor(t uint64, lvl int) int {
	return int(t>>(uint(lvl)*levelBits)) & slotMask
}

// slotStart returns the first tick of slot of level lvl in the ring that
// contains now.
// Pure function; anyone may call it.
func slotStart(now uint64, lvl, slot int) uint64 {
	shift := uint(lvl) * levelBits
	ring := now &^ (uint64(1)<<(shift+levelBits) - 1)
	return ring | uint64(slot)<<shift
}

// nextSlot returns the first occupied slot strictly after the slot that
// covers now. By the invariant in "Layout" no occupied slot lies at or before
// now's slot, so the result is the first occupied slot when there is one.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (lv *level[T]) nextSlot(now uint64, lvl int) (int, bool) {
	after := lv.occupied & (^uint64(0) << uint(slotFor(now, lvl)+1))
	if after == 0 {
		return 0, false
	}
	return bits.TrailingZeros64(after), true
}

// push links e into slot s and marks the slot occupied.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (lv *level[T]) push(s int, e *Entry[T]) {
	pushEntry(&lv.slots[s], e)
	lv.occupied |= 1 << uint(s)
}

// unlink removes e from slot s and clears the slot's bit if it became empty.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (lv *level[T]) unlink(s int, e *Entry[T]) {
	unlinkEntry(&lv.slots[s], e)
	if lv.slots[s] == nil {
		lv.occupied &^= 1 << uint(s)
	}
}

// take empties slot s and returns its list.
// Not safe for concurrent use; the owner of the Wheel calls it.
func (lv *level[T]) take(s int) *Entry[T] {
	head := lv.slots[s]
	lv.slots[s] = nil
	lv.occupied &^= 1 << uint(s)
	return head
}

// firstSlot returns the lowest set bit of the non-zero bitmap occupied.
// Pure function; anyone may call it.
func firstSlot(occupied uint64) int { return bits.TrailingZeros64(occupied) }
