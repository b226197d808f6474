package wsqueue_test

import (
	"sync/atomic"
	"testing"

	. "github.com/blitz-go/blitz/wsqueue"
)

// popAllDeque pops o until it is empty.
func popAllDeque(o *DequeOwner[int]) []int {
	var out []int
	for p := o.Pop(); p != nil; p = o.Pop() {
		out = append(out, *p)
	}
	return out
}

func TestNewDequeRoundsCapacityHint(t *testing.T) {
	for _, c := range []struct{ hint, want int }{
		{-1, DefaultCapacity}, {0, DefaultCapacity}, {1, 2}, {2, 2}, {3, 4}, {5, 8}, {64, 64}, {65, 128},
	} {
		o, _ := NewDeque[int](c.hint)
		equal(t, o.Capacity(), c.want, "hint %d", c.hint)
	}
}

func TestDequePushNilPanics(t *testing.T) {
	o, _ := NewDeque[int](4)
	panicsWith(t, ErrNilItem, func() { o.Push(nil) })
}

func TestStealResultString(t *testing.T) {
	equal(t, StealEmpty.String(), "empty")
	equal(t, StealSuccess.String(), "success")
	equal(t, StealRetry.String(), "retry")
	equal(t, StealResult(9).String(), "StealResult(9)")
}

func TestDequeOwnerIsLIFOThievesAreFIFO(t *testing.T) {
	o, s := NewDeque[int](8)
	for _, p := range ints(0, 6) {
		o.Push(p)
	}
	equal(t, o.Len(), 6)
	equal(t, s.Len(), 6)
	x, r := s.Steal()
	equal(t, r, StealSuccess)
	equal(t, val(x), 0)
	equal(t, val(s.StealLoop()), 1)
	equal(t, popAllDeque(o), []int{5, 4, 3, 2})
	if !o.IsEmpty() {
		t.Error("o.IsEmpty() is false")
	}
	if !s.IsEmpty() {
		t.Error("s.IsEmpty() is false")
	}
	x, r = s.Steal()
	if x != nil {
		t.Errorf("x = &%d, want nil", *x)
	}
	equal(t, r, StealEmpty)
	if got := s.StealLoop(); got != nil {
		t.Errorf("s.StealLoop() = &%d, want nil", *got)
	}
}

func TestDequeGrowsAndKeepsOrder(t *testing.T) {
	o, s := NewDeque[int](2)
	for _, p := range ints(0, 100) {
		o.Push(p)
	}
	equal(t, o.Capacity(), 128)
	for i := range 10 {
		if got := val(s.StealLoop()); got != i {
			t.Fatalf("steal %d took %d, want %d", i, got, i)
		}
	}
	for _, p := range ints(100, 200) { // grows again with top at 10
		o.Push(p)
	}
	equal(t, o.Capacity(), 512)
	got := popAllDeque(o)
	if len(got) != 290 {
		t.Fatalf("len(got) = %d, want %d: %v", len(got), 290, got)
	}
	for i, v := range got {
		if v != 299-i {
			t.Fatalf("pop %d = %d, want %d", i, v, 299-i)
		}
	}
}

// TestDequeConsumedSlotsAreClearedWhenOwnerFindsDequeEmpty: popped and stolen
// items stay reachable from the ring only until the owner next finds the
// deque empty (package doc, section "Garbage retention").
func TestDequeConsumedSlotsAreClearedWhenOwnerFindsDequeEmpty(t *testing.T) {
	o, s := NewDeque[int](4)
	for _, p := range ints(0, 10) { // grows twice
		o.Push(p)
	}
	s.Steal()
	s.Steal()
	o.Pop()
	equal(t, DequeNonNilSlots(s), 10, "consumed slots are only cleared lazily")
	popAllDeque(o)
	if got := DequeNonNilSlots(s); got != 0 {
		t.Errorf("DequeNonNilSlots(s) = %v, want 0", got)
	}

	o.Push(ints(0, 1)[0])
	s.Steal()
	if got := o.Pop(); got != nil {
		t.Errorf("o.Pop() = &%d, want nil", *got)
	}
	if got := DequeNonNilSlots(s); got != 0 {
		t.Errorf("DequeNonNilSlots(s) = %v, want 0", got)
	}
}

// pausedDequeSteal is a Steal running on its own goroutine, paused after it
// read the slot at top and before its CAS.
type pausedDequeSteal struct {
	release chan struct{}
	done    chan [2]int // item (-1 for nil), StealResult
}

// startPausedDequeSteal starts a Steal on s and waits until it has read its
// item.
func startPausedDequeSteal(s *DequeStealer[int]) *pausedDequeSteal {
	p := &pausedDequeSteal{release: make(chan struct{}), done: make(chan [2]int, 1)}
	reached := make(chan struct{})
	var paused atomic.Bool
	SetDequeHook(s, func(h HookPoint) {
		if h == HookDequeStealRead && paused.CompareAndSwap(false, true) {
			close(reached)
			<-p.release
		}
	})
	return p.start(s, reached)
}

// start runs the steal and waits until it has paused.
func (p *pausedDequeSteal) start(s *DequeStealer[int], reached chan struct{}) *pausedDequeSteal {
	go func() {
		x, r := s.Steal()
		p.done <- [2]int{val(x), int(r)}
	}()
	<-reached
	return p
}

// finish releases the steal and returns its item and result.
func (p *pausedDequeSteal) finish() (int, StealResult) {
	close(p.release)
	r := <-p.done
	return r[0], StealResult(r[1])
}

// TestDequeThiefHoldingOldRingAcrossGrowth: a thief that read the oldest item
// from a ring the owner has since replaced (twice) still gets the right item:
// the owner never writes a ring after replacing it, and the GC keeps the old
// ring alive while the thief holds it (package doc, section "Growth and
// reclamation").
func TestDequeThiefHoldingOldRingAcrossGrowth(t *testing.T) {
	o, s := NewDeque[int](2)
	o.Push(ints(0, 1)[0])
	o.Push(ints(1, 1)[0])
	p := startPausedDequeSteal(s)

	for _, q := range ints(2, 20) {
		o.Push(q)
	}
	equal(t, o.Capacity(), 32)
	equal(t, val(o.Pop()), 21)

	x, r := p.finish()
	equal(t, r, StealSuccess)
	equal(t, x, 0)
	got := popAllDeque(o)
	if len(got) != 20 {
		t.Fatalf("len(got) = %d, want %d: %v", len(got), 20, got)
	}
	equal(t, got[len(got)-1], 1)
}

// TestDequeOwnerWinsLastItemAgainstStalledThief: with one item left, the
// owner takes it by the thieves' own CAS on top; the thief that read it
// loses its CAS and reports Retry, then Empty.
func TestDequeOwnerWinsLastItemAgainstStalledThief(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(7, 1)[0])
	p := startPausedDequeSteal(s)

	equal(t, val(o.Pop()), 7)
	x, r := p.finish()
	equal(t, r, StealRetry)
	equal(t, x, -1)
	_, r = s.Steal()
	equal(t, r, StealEmpty)
	top, bottom := DequeIndices(s)
	equal(t, bottom, top)
}

// TestDequeThiefWinsLastItemAgainstOwner: the thief's CAS lands first; the
// owner's pop of the last item then finds the deque empty.
func TestDequeThiefWinsLastItemAgainstOwner(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(7, 1)[0])
	p := startPausedDequeSteal(s)
	x, r := p.finish()
	equal(t, r, StealSuccess)
	equal(t, x, 7)
	if got := o.Pop(); got != nil {
		t.Errorf("o.Pop() = &%d, want nil", *got)
	}
	o.Push(ints(8, 1)[0])
	equal(t, val(o.Pop()), 8, "bottom and top are consistent after the race")
}

// TestDequeOwnerPopsAboveStalledThief: with two items, the owner's reserving
// pop takes the newest without a CAS while the thief, stalled on the oldest,
// still gets it.
func TestDequeOwnerPopsAboveStalledThief(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(0, 1)[0])
	o.Push(ints(1, 1)[0])
	p := startPausedDequeSteal(s)
	equal(t, val(o.Pop()), 1)
	x, r := p.finish()
	equal(t, r, StealSuccess)
	equal(t, x, 0)
	if got := o.Pop(); got != nil {
		t.Errorf("o.Pop() = &%d, want nil", *got)
	}
}

// TestDequeStalledThiefLosesToAnotherThief: two thieves race for the same
// oldest item; exactly one gets it.
func TestDequeStalledThiefLosesToAnotherThief(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(0, 1)[0])
	o.Push(ints(1, 1)[0])
	p := startPausedDequeSteal(s)
	x, r := s.Steal()
	equal(t, r, StealSuccess)
	equal(t, val(x), 0)
	y, r := p.finish()
	equal(t, r, StealRetry)
	equal(t, y, -1)
	equal(t, val(s.StealLoop()), 1)
	if got := o.Pop(); got != nil {
		t.Errorf("o.Pop() = &%d, want nil", *got)
	}
}

// TestDequeReservingPopRacesThiefForLastItem: the owner sees two items, and
// before it reserves the newest, one thief takes the oldest and another reads
// the newest. The owner's reservation then finds one item left and must race
// the second thief for it by CAS, not take it as if it were alone: exactly one
// of them gets it.
func TestDequeReservingPopRacesThiefForLastItem(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(0, 1)[0])
	o.Push(ints(1, 1)[0])

	second := &pausedDequeSteal{release: make(chan struct{}), done: make(chan [2]int, 1)}
	reached := make(chan struct{})
	first := -1
	var stage atomic.Int32
	SetDequeHook(s, func(h HookPoint) {
		switch {
		case h == HookDequePopReserve && stage.CompareAndSwap(0, 1): // owner, before reserving
			x, _ := s.Steal() // the first thief takes the oldest
			first = val(x)
			stage.Store(2)
			second.start(s, reached) // the second thief reads the newest and pauses
		case h == HookDequeStealRead && stage.CompareAndSwap(2, 3):
			close(reached)
			<-second.release
		}
	})
	got := val(o.Pop())
	x, r := second.finish()
	equal(t, first, 0)
	equal(t, got, 1, "the owner's CAS came first")
	equal(t, r, StealRetry, "so the second thief's CAS must fail")
	equal(t, x, -1)
	if got := o.Pop(); got != nil {
		t.Errorf("o.Pop() = &%d, want nil", *got)
	}
	top, bottom := DequeIndices(s)
	equal(t, bottom, top)
}
