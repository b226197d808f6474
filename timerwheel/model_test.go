package timerwheel

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// This file is in package timerwheel, not timerwheel_test: the fuzzer
// instruments only the package under test, and generic code is compiled where
// it is instantiated, so a fuzz target in the external package would get no
// coverage signal from the Wheel.
//
// This file checks the Wheel against a reference model: a map from entry to
// deadline, where Advance(t) walks forward firing the pending entry with the
// smallest deadline <= t until none is left. Both sides run the same
// operations, decoded from a byte string, and must agree on every return
// value and on the multiset of (entry, deadline) fired by each Advance.
// Fire callbacks on both sides re-arm some entries (so reinsertion during a
// walk is covered) and cancel others.

const modelEntries = 24

// Callback rules, applied identically by the wheel's fire callback and the
// model's walk.
const maxRearms = 2

// rearmPeriod says whether entry id re-arms itself when it fires, and after
// how many ticks (0 makes it due: it must wait for the next Advance).
func rearmPeriod(id int) (uint64, bool) {
	return uint64(id % 3), id%4 == 1
}

// cancelTarget says whether entry id, when it fires, cancels another entry.
// Only entries that neither re-arm nor cancel are targets, and only while
// their deadline is after the walk's tick, so that the outcome does not
// depend on the unspecified order among equal deadlines.
func cancelTarget(id int) (int, bool) {
	return (id + 2) % modelEntries, id%4 == 2
}

type firing struct {
	id       int
	deadline uint64
}

func sortFirings(f []firing) {
	slices.SortFunc(f, func(a, b firing) int {
		return cmp.Or(cmp.Compare(a.deadline, b.deadline), cmp.Compare(a.id, b.id))
	})
}

// model is the reference.
type model struct {
	now     uint64
	pending map[int]uint64
	rearms  [modelEntries]int
	cancels []bool // results of callback cancels, in order
}

func (m *model) insert(id int, d uint64) bool {
	_, was := m.pending[id]
	m.pending[id] = d
	m.rearms[id] = maxRearms
	return was
}

func (m *model) cancel(id int) bool {
	_, was := m.pending[id]
	delete(m.pending, id)
	return was
}

func (m *model) advance(target uint64) []firing {
	limit := max(target, m.now)
	cur := m.now
	deferred := map[int]bool{}
	var fired []firing
	for {
		best, bestD := -1, uint64(0)
		for id, d := range m.pending {
			if d <= limit && !deferred[id] && (best < 0 || d < bestD || d == bestD && id < best) {
				best, bestD = id, d
			}
		}
		if best < 0 {
			break
		}
		delete(m.pending, best)
		cur = max(cur, bestD)
		fired = append(fired, firing{best, bestD})
		if p, ok := rearmPeriod(best); ok && m.rearms[best] > 0 {
			m.rearms[best]--
			m.pending[best] = addSat(cur, p)
			if m.pending[best] <= cur {
				deferred[best] = true
			}
		}
		if tgt, ok := cancelTarget(best); ok {
			if d, pending := m.pending[tgt]; pending && d > cur {
				m.cancels = append(m.cancels, m.cancel(tgt))
			}
		}
	}
	m.now = limit
	return fired
}

// harness runs one byte string against a Wheel and the model.
type harness struct {
	t       testing.TB
	data    []byte
	w       *Wheel[int]
	entries [modelEntries]Entry[int]
	rearms  [modelEntries]int
	cancels []bool
	fired   []firing
	oldNow  uint64
	m       model
}

func (h *harness) byte() byte {
	if len(h.data) == 0 {
		return 0
	}
	b := h.data[0]
	h.data = h.data[1:]
	return b
}

func (h *harness) uint(n int) uint64 {
	var v uint64
	for range n {
		v = v<<8 | uint64(h.byte())
	}
	return v
}

func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func subSat(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// span returns 64^lvl ticks, for lvl up to 7 (beyond the levels).
func span(lvl int) uint64 { return uint64(1) << (6 * uint(lvl%8)) }

// deadline decodes a deadline relative to the wheel's now: in the past, in
// level 0, at level boundaries, far away, in the overflow list, at the end
// of time, or equal to another entry's deadline.
func (h *harness) deadline() uint64 {
	now := h.m.now
	switch k := h.byte(); k % 8 {
	case 0:
		return subSat(now, h.uint(1)<<(k/8%40))
	case 1:
		return now + uint64(h.byte()%64)
	case 2:
		b := h.byte()
		return addSat(subSat(addSat(now, span(int(b%8))), 2), uint64(b/8%5))
	case 3:
		return addSat(now, h.uint(4))
	case 4:
		return addSat(now, (1<<36)*uint64(1+h.byte()%4)+h.uint(2))
	case 5:
		return math.MaxUint64 - uint64(h.byte()%3)
	case 6:
		return addSat(now, h.uint(6)>>4)
	default:
		return h.entries[int(h.byte())%modelEntries].Deadline()
	}
}

// target decodes an Advance target: a step, a level-boundary jump, a long
// jump, a step back, or the wheel's NextExpiry.
func (h *harness) target() uint64 {
	now := h.m.now
	switch k := h.byte(); k % 8 {
	case 0:
		return now
	case 1, 2:
		return now + uint64(1+h.byte()%70)
	case 3:
		b := h.byte()
		return addSat(subSat(addSat(now, span(int(b%8))), 1), uint64(b/8%3))
	case 4:
		return addSat(now, h.uint(5))
	case 5:
		return subSat(now, uint64(h.byte()))
	case 6:
		if next, ok := h.w.NextExpiry(); ok {
			return next
		}
		return now + 1
	default:
		if k == 255 {
			return math.MaxUint64
		}
		return addSat(now, h.uint(3)<<(k/8%24))
	}
}

func (h *harness) fire(e *Entry[int]) {
	id, now := e.Value, h.w.Now()
	if e.Pending() {
		h.t.Fatalf("entry %d pending inside its fire callback", id)
	}
	if d := e.Deadline(); d > now || (d > h.oldNow && d != now) || (d <= h.oldNow && now != h.oldNow) {
		h.t.Fatalf("entry %d deadline %d fired with Now %d (Now before Advance %d)", id, d, now, h.oldNow)
	}
	if n := len(h.fired); n > 0 && e.Deadline() > h.oldNow && h.fired[n-1].deadline > e.Deadline() {
		h.t.Fatalf("entry %d deadline %d fired after deadline %d", id, e.Deadline(), h.fired[n-1].deadline)
	}
	if n := len(h.fired); n > 0 && e.Deadline() <= h.oldNow && h.fired[n-1].deadline > h.oldNow {
		h.t.Fatalf("due entry %d fired after the walk began", id)
	}
	h.fired = append(h.fired, firing{id, e.Deadline()})
	if p, ok := rearmPeriod(id); ok && h.rearms[id] > 0 {
		h.rearms[id]--
		if h.byte()%2 == 0 { // choose the method from the input; both must behave alike
			h.w.Insert(e, addSat(now, p))
		} else if h.w.Reset(e, addSat(now, p)) {
			h.t.Fatalf("Reset of fired entry %d returned true", id)
		}
	}
	if tgt, ok := cancelTarget(id); ok {
		if te := &h.entries[tgt]; te.Pending() && te.Deadline() > now {
			h.cancels = append(h.cancels, h.w.Cancel(te))
		}
	}
}

func (h *harness) failf(step int, format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("step %d: "+format, append([]any{step}, args...)...)
}

func (h *harness) checkNextExpiry(step int) {
	got, ok := h.w.NextExpiry()
	if ok != (len(h.m.pending) > 0) || h.w.Len() != len(h.m.pending) {
		h.failf(step, "NextExpiry ok %v Len %d, model holds %d", ok, h.w.Len(), len(h.m.pending))
	}
	if !ok {
		return
	}
	now := h.m.now
	earliest, allOverflow := uint64(math.MaxUint64), true
	for _, d := range h.m.pending {
		earliest = min(earliest, d)
		allOverflow = allOverflow && d > now && d>>36 != now>>36
	}
	switch {
	case earliest <= now:
		if got != now {
			h.failf(step, "NextExpiry %d with an entry due, want Now %d", got, now)
		}
	case got <= now || got > earliest:
		h.failf(step, "NextExpiry %d outside (now %d, earliest %d]", got, now, earliest)
	case (earliest>>6 == now>>6 || allOverflow) && got != earliest:
		h.failf(step, "NextExpiry %d, want exact %d (now %d)", got, earliest, now)
	}
}

func expectPanic(want error, f func()) (err error) {
	defer func() {
		r := recover()
		if e, ok := r.(error); !ok || !errors.Is(e, want) {
			err = fmt.Errorf("panic %v, want %v", r, want)
		}
	}()
	f()
	return nil
}

// runModel drives the wheel and the model through the operations encoded in
// data and fails t at the first disagreement.
func runModel(t testing.TB, data []byte) {
	h := &harness{t: t, data: data}
	start := uint64(0)
	if b := h.byte(); b%4 == 1 {
		start = h.uint(8)
	} else if b%4 == 2 {
		start = 1<<36 - 1 - uint64(h.byte())
	}
	h.w = NewWheel[int](start)
	h.m = model{now: start, pending: map[int]uint64{}}
	for i := range h.entries {
		h.entries[i].Value = i
	}
	for step := 0; len(h.data) > 0; step++ {
		op := h.byte()
		id := int(h.byte()) % modelEntries
		e := &h.entries[id]
		switch op % 8 {
		case 0, 1:
			d := h.deadline()
			if e.Pending() {
				if err := expectPanic(ErrEntryPending, func() { h.w.Insert(e, d) }); err != nil {
					h.failf(step, "Insert of pending entry: %v", err)
				}
				break
			}
			h.w.Insert(e, d)
			h.rearms[id] = maxRearms
			h.m.insert(id, d)
		case 2:
			if got, want := h.w.Cancel(e), h.m.cancel(id); got != want {
				h.failf(step, "Cancel(%d) = %v, model %v", id, got, want)
			}
		case 3, 4:
			d := h.deadline()
			h.rearms[id] = maxRearms
			if got, want := h.w.Reset(e, d), h.m.insert(id, d); got != want {
				h.failf(step, "Reset(%d, %d) = %v, model %v", id, d, got, want)
			}
		default:
			h.advance(step, h.target())
		}
		if err := h.w.CheckInvariants(); err != nil {
			h.failf(step, "invariant: %v", err)
		}
		h.checkNextExpiry(step)
	}
	// Drain: everything left must fire by the end of time, in agreement.
	for range maxRearms + 1 { // entries re-armed as due fire at the next Advance
		h.advance(-1, math.MaxUint64)
	}
	if h.w.Len() != 0 || len(h.m.pending) != 0 {
		t.Fatalf("after draining: wheel holds %d, model %d", h.w.Len(), len(h.m.pending))
	}
}

func (h *harness) advance(step int, target uint64) {
	h.fired = h.fired[:0]
	h.cancels = h.cancels[:0]
	h.m.cancels = h.m.cancels[:0]
	h.oldNow = h.w.Now()
	n := h.w.Advance(target, h.fire)
	want := h.m.advance(target)
	if n != len(h.fired) {
		h.failf(step, "Advance returned %d, fired %d", n, len(h.fired))
	}
	if h.w.Now() != h.m.now {
		h.failf(step, "Now %d after Advance(%d), model %d", h.w.Now(), target, h.m.now)
	}
	got := slices.Clone(h.fired)
	sortFirings(got)
	sortFirings(want)
	if !slices.Equal(got, want) {
		h.failf(step, "Advance(%d) from %d fired %v, model %v", target, h.oldNow, got, want)
	}
	if !slices.Equal(h.cancels, h.m.cancels) {
		h.failf(step, "callback cancels %v, model %v", h.cancels, h.m.cancels)
	}
}

// modelSeeds are inputs that reach every level, the overflow list, the end
// of time, due entries and the callback rules.
func modelSeeds() [][]byte {
	seeds := [][]byte{
		{0},
		// insert at level 0, level boundaries and overflow; advance through them
		{0, 0, 1, 1, 10, 0, 2, 2, 9, 0, 3, 2, 17, 0, 4, 4, 1, 0, 0, 5, 2, 7, 6, 0, 5, 3, 7, 0, 5, 6, 0, 5, 6, 0, 5, 6, 0},
		// past deadlines, ties, callback rules
		{2, 5, 0, 1, 0, 40, 1, 5, 1, 3, 2, 6, 7, 5, 5, 7, 1, 0, 9, 1, 60, 1, 13, 1, 61, 5, 0, 1, 64, 5, 0, 6, 0},
		// a start near a block boundary, then long jumps
		{2, 7, 0, 1, 4, 1, 0, 0, 2, 3, 0, 1, 1, 5, 3, 4, 0, 0, 0, 0, 1, 5, 3, 7, 5, 0, 255},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		b := make([]byte, 200+r.IntN(400))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// FuzzWheel drives random insert/cancel/reset/advance sequences against the
// model. `go test` runs its seed corpus.
func FuzzWheel(f *testing.F) {
	for _, s := range modelSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runModel(t, data)
	})
}

// TestWheelMatchesModel is the seeded random loop: many random operation
// strings, each checked against the model.
func TestWheelMatchesModel(t *testing.T) {
	runs := 5000
	if testing.Short() {
		runs = 300
	}
	r := rand.New(rand.NewPCG(20240601, 7))
	for i := range runs {
		b := make([]byte, 50+r.IntN(1500))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { runModel(t, b) })
		if t.Failed() {
			break
		}
	}
}
