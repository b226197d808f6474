package waker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/waker"
)

// fill pushes n waiters at the back of l, waiter i with Value i and the
// Waker of counter i.
func fill(l *waker.List[int], n int) ([]waker.Waiter[int], []counter) {
	ws := make([]waker.Waiter[int], n)
	cs := make([]counter, n)
	for i := range ws {
		ws[i].Value = i
		l.PushBack(&ws[i], waker.New(&cs[i]))
	}
	return ws, cs
}

// values returns the Values of l from front to back.
func values(l *waker.List[int]) []int {
	var vs []int
	for w := l.Front(); w != nil; w = w.Next() {
		vs = append(vs, w.Value)
	}
	return vs
}

func TestZeroListAndWaiterAreReady(t *testing.T) {
	var l waker.List[int]
	var w waker.Waiter[int]
	assert.True(t, l.IsEmpty())
	assert.Zero(t, l.Len())
	assert.Nil(t, l.Front())
	assert.Nil(t, l.Back())
	assert.Nil(t, l.PopFront())
	assert.False(t, l.WakeOne())
	assert.Zero(t, l.WakeAll())
	assert.False(t, w.Linked())
	assert.True(t, w.Waker().IsZero())
	assert.False(t, l.Remove(&w))
}

func TestRemoveMiddleFrontBackKeepsOrder(t *testing.T) {
	var l waker.List[int]
	ws, cs := fill(&l, 5)
	assert.True(t, l.Remove(&ws[2]), "middle")
	assert.Equal(t, []int{0, 1, 3, 4}, values(&l))
	assert.True(t, l.Remove(&ws[0]), "front")
	assert.Equal(t, []int{1, 3, 4}, values(&l))
	assert.True(t, l.Remove(&ws[4]), "back")
	assert.Equal(t, []int{1, 3}, values(&l))
	assert.Same(t, &ws[1], l.Front())
	assert.Same(t, &ws[3], l.Back())
	assert.Equal(t, 2, l.Len())
	for i := range cs {
		assert.Zero(t, cs[i].n.Load(), "Remove wakes nobody")
	}
}

func TestRemoveOfRemovedWaiterReportsFalse(t *testing.T) {
	var l waker.List[int]
	ws, _ := fill(&l, 3)
	require.True(t, l.Remove(&ws[1]))
	assert.False(t, l.Remove(&ws[1]))
	assert.False(t, ws[1].Linked())
	assert.Equal(t, 2, l.Len())
}

func TestRemoveAfterWakeReportsFalse(t *testing.T) {
	var l waker.List[int]
	ws, cs := fill(&l, 2)
	require.True(t, l.WakeOne())
	assert.EqualValues(t, 1, cs[0].n.Load())
	assert.False(t, l.Remove(&ws[0]), "a cancel after the wake learns it was woken")
	assert.True(t, l.Remove(&ws[1]), "a cancel before the wake wins")
}

func TestWakeOneIsFIFO(t *testing.T) {
	var l waker.List[int]
	ws, cs := fill(&l, 4)
	for i := range ws {
		require.True(t, l.WakeOne())
		assert.False(t, ws[i].Linked())
		for j := range cs {
			want := int64(0)
			if j <= i {
				want = 1
			}
			assert.Equal(t, want, cs[j].n.Load(), "after wake %d, counter %d", i, j)
		}
	}
	assert.False(t, l.WakeOne())
}

func TestPushFrontGoesFirst(t *testing.T) {
	var l waker.List[int]
	ws, _ := fill(&l, 2)
	var w waker.Waiter[int]
	w.Value = 9
	l.PushFront(&w, waker.Noop())
	assert.Equal(t, []int{9, 0, 1}, values(&l))
	assert.Same(t, &w, l.PopFront())
	assert.Same(t, &ws[0], l.PopFront())
}

func TestWakeAllWakesOnlyWaitersPresentAtTheCall(t *testing.T) {
	var l waker.List[int]
	ws, cs := fill(&l, 3)
	var late waker.Waiter[int]
	// A Waker that, like a re-polled task on the same goroutine, pushes
	// another waiter while WakeAll runs.
	lateWaker := waker.Func(func() {
		if !late.Linked() {
			l.PushBack(&late, waker.Noop())
		}
	})
	ws[1].SetWaker(lateWaker)
	assert.Equal(t, 3, l.WakeAll())
	assert.EqualValues(t, 1, cs[0].n.Load())
	assert.EqualValues(t, 0, cs[1].n.Load(), "SetWaker replaced counter 1's Waker")
	assert.EqualValues(t, 1, cs[2].n.Load())
	assert.True(t, late.Linked(), "the waiter pushed during WakeAll stays")
	assert.Equal(t, 1, l.Len())
}

func TestPopIntoTakesAsManyAsFitInFIFOOrder(t *testing.T) {
	var l waker.List[int]
	_, cs := fill(&l, waker.WakeListCap+3)
	var wl waker.WakeList
	wl.Push(waker.Waker{}) // one slot already used
	assert.Equal(t, waker.WakeListCap-1, l.PopInto(&wl))
	assert.False(t, wl.CanPush())
	assert.Equal(t, 4, l.Len())
	assert.Equal(t, waker.WakeListCap-1, l.Front().Value)
	for i := range cs {
		assert.Zero(t, cs[i].n.Load(), "PopInto wakes nobody")
	}
	assert.Equal(t, waker.WakeListCap, wl.WakeAll())
	for i := range cs {
		want := int64(0)
		if i < waker.WakeListCap-1 {
			want = 1
		}
		assert.Equal(t, want, cs[i].n.Load(), "counter %d", i)
	}
	assert.Zero(t, wl.Len())
	assert.True(t, wl.CanPush())
	assert.Zero(t, wl.WakeAll())
}

func TestWakerStaysAfterUnlink(t *testing.T) {
	var l waker.List[int]
	var c counter
	var w waker.Waiter[int]
	l.PushBack(&w, waker.New(&c))
	require.Same(t, &w, l.PopFront())
	w.Waker().Wake()
	assert.EqualValues(t, 1, c.n.Load())
	assert.Nil(t, w.Next())
}

func TestListMisusePanics(t *testing.T) {
	var l, other waker.List[int]
	var w waker.Waiter[int]
	expectPanic(t, waker.ErrNilWaiter, func() { l.PushBack(nil, waker.Noop()) })
	expectPanic(t, waker.ErrNilWaiter, func() { l.PushFront(nil, waker.Noop()) })
	expectPanic(t, waker.ErrNilWaiter, func() { l.Remove(nil) })
	l.PushBack(&w, waker.Noop())
	expectPanic(t, waker.ErrWaiterLinked, func() { l.PushBack(&w, waker.Noop()) })
	expectPanic(t, waker.ErrWaiterLinked, func() { l.PushFront(&w, waker.Noop()) })
	expectPanic(t, waker.ErrWaiterLinked, func() { other.PushBack(&w, waker.Noop()) })
	expectPanic(t, waker.ErrForeignWaiter, func() { other.Remove(&w) })
	assert.Equal(t, 1, l.Len(), "a misuse panic leaves the list as it was")
	assert.Zero(t, other.Len())
	assert.True(t, l.Remove(&w))

	var wl waker.WakeList
	for wl.CanPush() {
		wl.Push(waker.Noop())
	}
	expectPanic(t, waker.ErrWakeListFull, func() { wl.Push(waker.Noop()) })
	assert.Equal(t, waker.WakeListCap, wl.WakeAll())
}

// TestRegisterKeepsPlace: Register links a new waiter at the back and, for
// one already in the list, swaps its Waker without moving it.
func TestRegisterKeepsPlace(t *testing.T) {
	var l waker.List[int]
	ws, cs := fill(&l, 2)
	var w waker.Waiter[int]
	w.Value = 9
	var first, second counter
	l.Register(&w, waker.New(&first))
	assert.Equal(t, []int{0, 1, 9}, values(&l), "linked at the back")
	l.Register(&ws[0], waker.New(&second))
	l.Register(&w, waker.New(&second))
	assert.Equal(t, []int{0, 1, 9}, values(&l), "nobody moved")
	assert.Equal(t, 3, l.Len())
	assert.Equal(t, 3, l.WakeAll())
	assert.Equal(t, int64(2), second.n.Load(), "both re-registered waiters woke the new Waker")
	assert.Equal(t, int64(0), first.n.Load())
	assert.Equal(t, int64(1), cs[1].n.Load())
	assert.Equal(t, int64(0), cs[0].n.Load())
	l.Register(&w, waker.Noop())
	var other waker.List[int]
	require.Panics(t, func() { other.Register(&w, waker.Noop()) }, "linked in another list")
}
