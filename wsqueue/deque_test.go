package wsqueue_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		assert.Equal(t, c.want, o.Capacity(), "hint %d", c.hint)
	}
}

func TestDequePushNilPanics(t *testing.T) {
	o, _ := NewDeque[int](4)
	assert.PanicsWithValue(t, "wsqueue: push of nil item", func() { o.Push(nil) })
}

func TestStealResultString(t *testing.T) {
	assert.Equal(t, "empty", StealEmpty.String())
	assert.Equal(t, "success", StealSuccess.String())
	assert.Equal(t, "retry", StealRetry.String())
	assert.Equal(t, "StealResult(9)", StealResult(9).String())
}

func TestDequeOwnerIsLIFOThievesAreFIFO(t *testing.T) {
	o, s := NewDeque[int](8)
	for _, p := range ints(0, 6) {
		o.Push(p)
	}
	assert.Equal(t, 6, o.Len())
	assert.Equal(t, 6, s.Len())
	x, r := s.Steal()
	assert.Equal(t, StealSuccess, r)
	assert.Equal(t, 0, val(x))
	assert.Equal(t, 1, val(s.StealLoop()))
	assert.Equal(t, []int{5, 4, 3, 2}, popAllDeque(o))
	assert.True(t, o.IsEmpty())
	assert.True(t, s.IsEmpty())
	x, r = s.Steal()
	assert.Nil(t, x)
	assert.Equal(t, StealEmpty, r)
	assert.Nil(t, s.StealLoop())
}

func TestDequeGrowsAndKeepsOrder(t *testing.T) {
	o, s := NewDeque[int](2)
	for _, p := range ints(0, 100) {
		o.Push(p)
	}
	assert.Equal(t, 128, o.Capacity())
	for i := range 10 {
		require.Equal(t, i, val(s.StealLoop()))
	}
	for _, p := range ints(100, 200) { // grows again with top at 10
		o.Push(p)
	}
	assert.Equal(t, 512, o.Capacity())
	got := popAllDeque(o)
	require.Len(t, got, 290)
	for i, v := range got {
		require.Equal(t, 299-i, v)
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
	assert.Equal(t, 10, DequeNonNilSlots(s), "consumed slots are only cleared lazily")
	popAllDeque(o)
	assert.Zero(t, DequeNonNilSlots(s))

	o.Push(ints(0, 1)[0])
	s.Steal()
	assert.Nil(t, o.Pop())
	assert.Zero(t, DequeNonNilSlots(s))
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
	assert.Equal(t, 32, o.Capacity())
	assert.Equal(t, 21, val(o.Pop()))

	x, r := p.finish()
	assert.Equal(t, StealSuccess, r)
	assert.Equal(t, 0, x)
	got := popAllDeque(o)
	require.Len(t, got, 20)
	assert.Equal(t, 1, got[len(got)-1])
}

// TestDequeOwnerWinsLastItemAgainstStalledThief: with one item left, the
// owner takes it by the thieves' own CAS on top; the thief that read it
// loses its CAS and reports Retry, then Empty.
func TestDequeOwnerWinsLastItemAgainstStalledThief(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(7, 1)[0])
	p := startPausedDequeSteal(s)

	assert.Equal(t, 7, val(o.Pop()))
	x, r := p.finish()
	assert.Equal(t, StealRetry, r)
	assert.Equal(t, -1, x)
	_, r = s.Steal()
	assert.Equal(t, StealEmpty, r)
	top, bottom := DequeIndices(s)
	assert.Equal(t, top, bottom)
}

// TestDequeThiefWinsLastItemAgainstOwner: the thief's CAS lands first; the
// owner's pop of the last item then finds the deque empty.
func TestDequeThiefWinsLastItemAgainstOwner(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(7, 1)[0])
	p := startPausedDequeSteal(s)
	x, r := p.finish()
	assert.Equal(t, StealSuccess, r)
	assert.Equal(t, 7, x)
	assert.Nil(t, o.Pop())
	o.Push(ints(8, 1)[0])
	assert.Equal(t, 8, val(o.Pop()), "bottom and top are consistent after the race")
}

// TestDequeOwnerPopsAboveStalledThief: with two items, the owner's reserving
// pop takes the newest without a CAS while the thief, stalled on the oldest,
// still gets it.
func TestDequeOwnerPopsAboveStalledThief(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(0, 1)[0])
	o.Push(ints(1, 1)[0])
	p := startPausedDequeSteal(s)
	assert.Equal(t, 1, val(o.Pop()))
	x, r := p.finish()
	assert.Equal(t, StealSuccess, r)
	assert.Equal(t, 0, x)
	assert.Nil(t, o.Pop())
}

// TestDequeStalledThiefLosesToAnotherThief: two thieves race for the same
// oldest item; exactly one gets it.
func TestDequeStalledThiefLosesToAnotherThief(t *testing.T) {
	o, s := NewDeque[int](4)
	o.Push(ints(0, 1)[0])
	o.Push(ints(1, 1)[0])
	p := startPausedDequeSteal(s)
	x, r := s.Steal()
	assert.Equal(t, StealSuccess, r)
	assert.Equal(t, 0, val(x))
	y, r := p.finish()
	assert.Equal(t, StealRetry, r)
	assert.Equal(t, -1, y)
	assert.Equal(t, 1, val(s.StealLoop()))
	assert.Nil(t, o.Pop())
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
	assert.Equal(t, 0, first)
	assert.Equal(t, 1, got, "the owner's CAS came first")
	assert.Equal(t, StealRetry, r, "so the second thief's CAS must fail")
	assert.Equal(t, -1, x)
	assert.Nil(t, o.Pop())
	top, bottom := DequeIndices(s)
	assert.Equal(t, top, bottom)
}
