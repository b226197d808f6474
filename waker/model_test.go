package waker

// The model and fuzz tests live in package waker, not waker_test: the fuzzer
// instruments only the package under test, and List is generic, so its code
// is compiled where it is instantiated, here.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// modelCounter is a Wakeable that counts its wakes. Single goroutine.
type modelCounter struct{ n int }

func (c *modelCounter) Wake() { c.n++ }

const (
	modelWaiters = 8 // waiters shared by the two lists
	modelLists   = 2
	modelOps     = 10
)

// modelState is the reference: a slice of waiter indices per list, where
// each waiter is, which counter its Waker counts on (-1: zero Waker), and how
// many wakes each counter should have seen.
type modelState struct {
	t        *testing.T
	lists    [modelLists]List[int]
	ws       [modelWaiters]Waiter[int]
	counters [2 * modelWaiters]modelCounter

	ref      [modelLists][]int
	where    [modelWaiters]int // list index, -1 when unlinked
	wakerOf  [modelWaiters]int // counter index, -1 for the zero Waker
	want     [2 * modelWaiters]int
	wakeList WakeList
}

// wakerFor returns the Waker of counter c, or the zero Waker for -1.
func (m *modelState) wakerFor(c int) Waker {
	if c < 0 {
		return Waker{}
	}
	return New(&m.counters[c])
}

// expectPanic runs f and fails unless it panics with target.
func (m *modelState) expectPanic(target error, f func()) {
	m.t.Helper()
	defer func() {
		m.t.Helper()
		r := recover()
		err, _ := r.(error)
		if !errors.Is(err, target) {
			m.t.Fatalf("want panic %v, got %v", target, r)
		}
	}()
	f()
}

// woken records that waiter w was taken off a list and its Waker called.
func (m *modelState) woken(w int) {
	if c := m.wakerOf[w]; c >= 0 {
		m.want[c]++
	}
}

// popRef removes the front of reference list li and returns it.
func (m *modelState) popRef(li int) int {
	w := m.ref[li][0]
	m.ref[li] = m.ref[li][1:]
	m.where[w] = -1
	return w
}

// index returns the index of waiter p in ws, or -1 for nil.
func (m *modelState) index(p *Waiter[int]) int {
	if p == nil {
		return -1
	}
	for i := range m.ws {
		if &m.ws[i] == p {
			return i
		}
	}
	m.t.Fatalf("waiter %p is not one of the model's", p)
	return -1
}

// step applies one operation to the lists and to the reference.
func (m *modelState) step(op, arg byte) {
	wi := int(arg) % modelWaiters
	li := int(arg>>3) % modelLists
	ci := 2*wi + int(arg>>4)&1
	if arg>>5&3 == 3 {
		ci = -1
	}
	l, w := &m.lists[li], &m.ws[wi]
	switch op % modelOps {
	case 0, 1: // PushBack, PushFront
		front := op%modelOps == 1
		push := l.PushBack
		if front {
			push = l.PushFront
		}
		if m.where[wi] >= 0 {
			m.expectPanic(ErrWaiterLinked, func() { push(w, m.wakerFor(ci)) })
			return
		}
		push(w, m.wakerFor(ci))
		m.where[wi], m.wakerOf[wi] = li, ci
		if front {
			m.ref[li] = slices.Insert(m.ref[li], 0, wi)
		} else {
			m.ref[li] = append(m.ref[li], wi)
		}
		w.Value = wi
	case 2, 3: // Remove (twice as often: middle, front, back, absent, foreign)
		switch m.where[wi] {
		case -1:
			if l.Remove(w) {
				m.t.Fatalf("Remove of unlinked waiter %d reported true", wi)
			}
		case li:
			if !l.Remove(w) {
				m.t.Fatalf("Remove of linked waiter %d reported false", wi)
			}
			m.ref[li] = slices.DeleteFunc(m.ref[li], func(x int) bool { return x == wi })
			m.where[wi] = -1
		default:
			m.expectPanic(ErrForeignWaiter, func() { l.Remove(w) })
		}
	case 4: // PopFront
		got := m.index(l.PopFront())
		want := -1
		if len(m.ref[li]) > 0 {
			want = m.popRef(li)
		}
		if got != want {
			m.t.Fatalf("PopFront of list %d = %d, want %d", li, got, want)
		}
		if got >= 0 && m.ws[got].Value != got {
			m.t.Fatalf("popped waiter %d carries Value %d", got, m.ws[got].Value)
		}
	case 5: // WakeOne
		want := len(m.ref[li]) > 0
		if got := l.WakeOne(); got != want {
			m.t.Fatalf("WakeOne of list %d = %v, want %v", li, got, want)
		}
		if want {
			m.woken(m.popRef(li))
		}
	case 6: // WakeAll
		want := len(m.ref[li])
		if got := l.WakeAll(); got != want {
			m.t.Fatalf("WakeAll of list %d = %d, want %d", li, got, want)
		}
		for len(m.ref[li]) > 0 {
			m.woken(m.popRef(li))
		}
	case 7: // PopInto a WakeList with room for 0 to 3, then wake it
		room := int(arg>>6) % 4
		for m.wakeList.Len() < WakeListCap-room {
			m.wakeList.Push(Waker{})
		}
		taken := l.PopInto(&m.wakeList)
		want := min(room, len(m.ref[li]))
		if taken != want {
			m.t.Fatalf("PopInto of list %d with room %d took %d, want %d", li, room, taken, want)
		}
		if m.wakeList.CanPush() != (taken < room) {
			m.t.Fatalf("CanPush = %v after taking %d of room %d", m.wakeList.CanPush(), taken, room)
		}
		for range taken {
			m.woken(m.popRef(li))
		}
		if n := m.wakeList.WakeAll(); n != WakeListCap-room+taken {
			m.t.Fatalf("WakeList.WakeAll = %d, want %d", n, WakeListCap-room+taken)
		}
	case 8: // SetWaker, linked or not
		w.SetWaker(m.wakerFor(ci))
		m.wakerOf[wi] = ci
	case 9: // Front, Back
		wantF, wantB := -1, -1
		if n := len(m.ref[li]); n > 0 {
			wantF, wantB = m.ref[li][0], m.ref[li][n-1]
		}
		if f, b := m.index(l.Front()), m.index(l.Back()); f != wantF || b != wantB {
			m.t.Fatalf("Front, Back of list %d = %d, %d, want %d, %d", li, f, b, wantF, wantB)
		}
	}
}

// check compares every list, waiter and counter with the reference.
func (m *modelState) check() {
	m.t.Helper()
	for li := range m.lists {
		l := &m.lists[li]
		var got []int
		var prev *Waiter[int]
		for w := l.Front(); w != nil; w = w.Next() {
			if w.prev != prev {
				m.t.Fatalf("list %d: broken prev link at waiter %d", li, m.index(w))
			}
			if w.list != l {
				m.t.Fatalf("list %d: waiter %d points to another list", li, m.index(w))
			}
			got = append(got, m.index(w))
			prev = w
			if len(got) > modelWaiters {
				m.t.Fatalf("list %d: cycle", li)
			}
		}
		if l.Back() != prev {
			m.t.Fatalf("list %d: tail is not the last waiter", li)
		}
		if !slices.Equal(got, m.ref[li]) {
			m.t.Fatalf("list %d = %v, want %v", li, got, m.ref[li])
		}
		if l.Len() != len(m.ref[li]) || l.IsEmpty() != (len(m.ref[li]) == 0) {
			m.t.Fatalf("list %d: Len %d, IsEmpty %v, want %d", li, l.Len(), l.IsEmpty(), len(m.ref[li]))
		}
	}
	for wi := range m.ws {
		w := &m.ws[wi]
		if w.Linked() != (m.where[wi] >= 0) {
			m.t.Fatalf("waiter %d: Linked %v, want list %d", wi, w.Linked(), m.where[wi])
		}
		if !w.Linked() && (w.next != nil || w.prev != nil) {
			m.t.Fatalf("waiter %d: unlinked but keeps links", wi)
		}
		if w.Waker() != m.wakerFor(m.wakerOf[wi]) {
			m.t.Fatalf("waiter %d: Waker is not the one pushed or set", wi)
		}
	}
	for ci := range m.counters {
		if m.counters[ci].n != m.want[ci] {
			m.t.Fatalf("counter %d woken %d times, want %d", ci, m.counters[ci].n, m.want[ci])
		}
	}
}

// runModel drives two lists and eight waiters with the operations encoded
// in data, two bytes each, and checks them against the reference after
// every operation.
func runModel(t *testing.T, data []byte) {
	m := &modelState{t: t}
	for i := range m.where {
		m.where[i], m.wakerOf[i] = -1, -1
	}
	for i := 0; i+1 < len(data); i += 2 {
		m.step(data[i], data[i+1])
		m.check()
	}
}

// modelSeeds are operation strings that reach every case: pushes at both
// ends, removes of the middle, front, back, absent and foreign waiters, and
// each way of waking.
func modelSeeds() [][]byte {
	return [][]byte{
		{0, 0, 0, 1, 0, 2, 2, 1, 4, 0, 9, 0, 2, 1},
		{0, 0, 1, 1, 0, 2, 1, 3, 9, 0, 2, 0, 2, 3, 5, 0, 6, 0},
		{0, 0, 0, 8, 0, 9, 2, 0, 0, 0, 0, 1, 1, 0, 3, 8},
		{0, 0, 0, 1, 0, 2, 0, 3, 7, 0x40, 7, 0xc0, 8, 0x30, 6, 0},
		{0, 0x30, 0, 0x61, 5, 0, 5, 0, 8, 0x10, 0, 0},
	}
}

// FuzzList is the coverage-guided version of TestListMatchesModel.
func FuzzList(f *testing.F) {
	for _, s := range modelSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runModel(t, data)
	})
}

// TestListMatchesModel is the seeded random loop: many random operation
// strings, each checked against the slice reference after every step.
func TestListMatchesModel(t *testing.T) {
	for i, s := range modelSeeds() {
		t.Run(fmt.Sprint("seed", i), func(t *testing.T) { runModel(t, s) })
	}
	runs := 3000
	if testing.Short() {
		runs = 300
	}
	r := rand.New(rand.NewPCG(20261121, 3))
	for i := range runs {
		b := make([]byte, 2*(10+r.IntN(300)))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { runModel(t, b) })
		if t.Failed() {
			break
		}
	}
}
