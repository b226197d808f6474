package timerwheel_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/blitz-go/blitz/timerwheel"
)

type entry = timerwheel.Entry[int]

// recorder collects what Advance fires.
type recorder struct {
	w     *timerwheel.Wheel[int]
	fired []int    // Value of each fired entry, in firing order
	ticks []uint64 // w.Now() when each fired
}

func (r *recorder) fire(e *entry) {
	r.fired = append(r.fired, e.Value)
	r.ticks = append(r.ticks, r.w.Now())
}

// advance fires up to now and returns the Values fired by this call.
func (r *recorder) advance(t *testing.T, now uint64) []int {
	t.Helper()
	start := len(r.fired)
	n := r.w.Advance(now, r.fire)
	if fired := len(r.fired) - start; n != fired {
		t.Fatalf("Advance's count %d, but it fired %d", n, fired)
	}
	if err := r.w.CheckInvariants(); err != nil {
		t.Fatalf("r.w.CheckInvariants(): %v", err)
	}
	return r.fired[start:]
}

func newRecorder(start uint64) *recorder {
	return &recorder{w: timerwheel.NewWheel[int](start)}
}

// mustPanicWith asserts that f panics with an error matching want.
func mustPanicWith(t *testing.T, want error, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		if !ok {
			t.Fatalf("panic value %v is not an error", r)
		}
		if !errors.Is(err, want) {
			t.Fatalf("panic %v, want %v", err, want)
		}
		if !strings.Contains(err.Error(), "timerwheel: ") {
			t.Fatalf("%q does not contain %q", err.Error(), "timerwheel: ")
		}
	}()
	f()
}

func TestZeroWheelIsUsable(t *testing.T) {
	var w timerwheel.Wheel[int]
	e := &entry{Value: 7}
	w.Insert(e, 3)
	var got []int
	w.Advance(3, func(e *entry) { got = append(got, e.Value) })
	equal(t, got, []int{7})
	equal(t, w.Now(), uint64(3))
}

// TestEntryLifecycleEdgeCases is the table of the edge cases named in the
// package doc's "Entry lifecycle": each row runs a script against a wheel
// standing at tick 100 and checks return values and what fires.
func TestEntryLifecycleEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, r *recorder, e *entry)
	}{
		{"cancel never inserted returns false", func(t *testing.T, r *recorder, e *entry) {
			if r.w.Cancel(e) {
				t.Error("r.w.Cancel(e) is true")
			}
			if e.Pending() {
				t.Error("e.Pending() is true")
			}
		}},
		{"cancel pending returns true and it never fires", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			if !e.Pending() {
				t.Error("e.Pending() is false")
			}
			if !r.w.Cancel(e) {
				t.Error("r.w.Cancel(e) is false")
			}
			if e.Pending() {
				t.Error("e.Pending() is true")
			}
			if got := r.advance(t, 1000); len(got) != 0 {
				t.Errorf("r.advance(t, 1000) = %v, want empty", got)
			}
			equal(t, r.w.Len(), 0)
		}},
		{"double cancel: true then false", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			if !r.w.Cancel(e) {
				t.Error("r.w.Cancel(e) is false")
			}
			if r.w.Cancel(e) {
				t.Error("r.w.Cancel(e) is true")
			}
		}},
		{"cancel after fire returns false", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			equal(t, r.advance(t, 150), []int{1})
			if e.Pending() {
				t.Error("e.Pending() is true")
			}
			if r.w.Cancel(e) {
				t.Error("r.w.Cancel(e) is true")
			}
		}},
		{"reinsert after fire fires again", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			equal(t, r.advance(t, 150), []int{1})
			r.w.Insert(e, 300)
			if got := r.advance(t, 299); len(got) != 0 {
				t.Errorf("r.advance(t, 299) = %v, want empty", got)
			}
			equal(t, r.advance(t, 300), []int{1})
		}},
		{"reinsert after cancel fires at the new deadline", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			r.w.Cancel(e)
			r.w.Insert(e, 5000)
			if got := r.advance(t, 4999); len(got) != 0 {
				t.Errorf("r.advance(t, 4999) = %v, want empty", got)
			}
			equal(t, r.advance(t, 5000), []int{1})
		}},
		{"past deadline is due and fires on the next advance", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 40)
			equal(t, timerwheel.Where(e), "due")
			equal(t, r.advance(t, 100), []int{1})
			equal(t, r.ticks[0], uint64(100), "fires at Now, not before it")
		}},
		{"deadline equal to now is due", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 100)
			equal(t, timerwheel.Where(e), "due")
			equal(t, r.advance(t, 100), []int{1})
		}},
		{"due entry fires even when advance goes backwards", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 0)
			equal(t, r.advance(t, 5), []int{1})
			equal(t, r.w.Now(), uint64(100), "time never moves backwards")
		}},
		{"cancel due entry", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 10)
			if !r.w.Cancel(e) {
				t.Error("r.w.Cancel(e) is false")
			}
			if got := r.advance(t, 100); len(got) != 0 {
				t.Errorf("r.advance(t, 100) = %v, want empty", got)
			}
		}},
		{"reset pending returns true and moves it", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			if !r.w.Reset(e, 7000) {
				t.Error("r.w.Reset(e, 7000) is false")
			}
			if got := r.advance(t, 6999); len(got) != 0 {
				t.Errorf("r.advance(t, 6999) = %v, want empty", got)
			}
			equal(t, r.advance(t, 7000), []int{1})
		}},
		{"reset earlier", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 1<<30)
			if !r.w.Reset(e, 101) {
				t.Error("r.w.Reset(e, 101) is false")
			}
			equal(t, r.advance(t, 101), []int{1})
			if got := r.advance(t, 1<<31); len(got) != 0 {
				t.Errorf("r.advance(t, 1<<31) = %v, want empty", got)
			}
		}},
		{"reset idle returns false and inserts", func(t *testing.T, r *recorder, e *entry) {
			if r.w.Reset(e, 150) {
				t.Error("r.w.Reset(e, 150) is true")
			}
			if !e.Pending() {
				t.Error("e.Pending() is false")
			}
			equal(t, r.advance(t, 150), []int{1})
		}},
		{"reset after fire returns false and fires again", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			r.advance(t, 150)
			if r.w.Reset(e, 160) {
				t.Error("r.w.Reset(e, 160) is true")
			}
			equal(t, r.advance(t, 160), []int{1})
		}},
		{"reset into the past makes it due", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 1<<20)
			if !r.w.Reset(e, 3) {
				t.Error("r.w.Reset(e, 3) is false")
			}
			equal(t, timerwheel.Where(e), "due")
			equal(t, r.advance(t, 100), []int{1})
		}},
		{"deadline keeps its value after fire", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			r.advance(t, 1000)
			equal(t, e.Deadline(), uint64(150))
		}},
		{"max deadline goes to overflow and fires at max", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, math.MaxUint64)
			equal(t, timerwheel.Where(e), "overflow")
			if got := r.advance(t, math.MaxUint64-1); len(got) != 0 {
				t.Errorf("r.advance(t, math.MaxUint64-1) = %v, want empty", got)
			}
			equal(t, r.advance(t, math.MaxUint64), []int{1})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(100)
			tc.run(t, r, &entry{Value: 1})
			if err := r.w.CheckInvariants(); err != nil {
				t.Fatalf("r.w.CheckInvariants(): %v", err)
			}
		})
	}
}

func TestMisusePanics(t *testing.T) {
	a := timerwheel.NewWheel[int](0)
	b := timerwheel.NewWheel[int](0)
	e := &entry{}
	a.Insert(e, 10)

	mustPanicWith(t, timerwheel.ErrNilEntry, func() { a.Insert(nil, 1) })
	mustPanicWith(t, timerwheel.ErrNilEntry, func() { a.Cancel(nil) })
	mustPanicWith(t, timerwheel.ErrNilEntry, func() { a.Reset(nil, 1) })
	mustPanicWith(t, timerwheel.ErrEntryPending, func() { a.Insert(e, 20) })
	mustPanicWith(t, timerwheel.ErrForeignEntry, func() { b.Insert(e, 20) })
	mustPanicWith(t, timerwheel.ErrForeignEntry, func() { b.Cancel(e) })
	mustPanicWith(t, timerwheel.ErrForeignEntry, func() { b.Reset(e, 20) })
	mustPanicWith(t, timerwheel.ErrReentrantAdvance, func() {
		a.Advance(10, func(*entry) { a.Advance(11, nil) })
	})
	// The failed calls changed nothing, and once e has fired (above) it
	// may move to the other wheel.
	if err := a.CheckInvariants(); err != nil {
		t.Fatalf("a.CheckInvariants(): %v", err)
	}
	if err := b.CheckInvariants(); err != nil {
		t.Fatalf("b.CheckInvariants(): %v", err)
	}
	equal(t, b.Len(), 0)
	equal(t, a.Now(), uint64(10))
	b.Insert(e, 20)
	equal(t, b.Advance(20, nil), 1)
}

// TestNeverEarlyNeverLateAcrossLevels puts a single entry at deadlines that
// exercise every level, the level boundaries and the overflow list, from
// several starting ticks, and checks that it fires at its deadline exactly:
// not at deadline-1 (never early) and at deadline (not even one tick late).
func TestNeverEarlyNeverLateAcrossLevels(t *testing.T) {
	starts := []uint64{0, 1, 63, 64, 4095, 1<<36 - 1, 1 << 36, 12345678901, math.MaxUint64 - 1<<40}
	var deltas []uint64
	for lvl := range 8 {
		span := uint64(1) << (6 * lvl)
		deltas = append(deltas, span-1, span, span+1, 63*span, 64*span-1, 64*span, 64*span+1)
	}
	for _, start := range starts {
		for _, delta := range deltas {
			if delta == 0 || start > math.MaxUint64-delta {
				continue
			}
			d := start + delta
			r := newRecorder(start)
			e := &entry{Value: 1}
			r.w.Insert(e, d)
			if err := r.w.CheckInvariants(); err != nil {
				t.Fatalf("r.w.CheckInvariants(): %v", err)
			}
			if got := r.advance(t, d-1); len(got) != 0 {
				t.Fatalf("start %d deadline %d fired early: r.advance(t, d-1) = %v, want empty", start, d, got)
			}
			if !equal(t, r.advance(t, d), []int{1}, "start %d deadline %d", start, d) {
				t.FailNow()
			}
			if !equal(t, r.ticks, []uint64{d}, "Now during fire") {
				t.FailNow()
			}
		}
	}
}

// TestLevelPlacement checks "Level choice": the level is the one that holds
// the highest bit in which now and the deadline differ.
func TestLevelPlacement(t *testing.T) {
	tests := []struct {
		now, deadline uint64
		where         string
	}{
		{0, 1, "level0"},
		{0, 63, "level0"},
		{0, 64, "level1"},
		{63, 64, "level1"}, // one tick away, but a different 64-tick ring
		{64, 127, "level0"},
		{0, 4095, "level1"},
		{0, 4096, "level2"},
		{0, 1<<36 - 1, "level5"},
		{0, 1 << 36, "overflow"},
		{1<<36 - 1, 1 << 36, "overflow"},
		{1 << 36, 1<<36 + 5, "level0"},
		{100, 50, "due"},
		{100, 100, "due"},
	}
	for _, tc := range tests {
		w := timerwheel.NewWheel[int](tc.now)
		e := &entry{}
		w.Insert(e, tc.deadline)
		equal(t, timerwheel.Where(e), tc.where, "now %d deadline %d", tc.now, tc.deadline)
		if err := w.CheckInvariants(); err != nil {
			t.Fatalf("w.CheckInvariants(): %v", err)
		}
	}
}

func TestNextExpiry(t *testing.T) {
	w := timerwheel.NewWheel[int](1000)
	_, ok := w.NextExpiry()
	if ok {
		t.Error("empty wheel")
	}

	far := &entry{}
	w.Insert(far, 1000+1<<40) // overflow only: exact
	got, ok := w.NextExpiry()
	if !ok {
		t.Error("NextExpiry reports no entry")
	}
	equal(t, got, uint64(1000+1<<40))

	mid := &entry{}
	w.Insert(mid, 5000) // level 2 (1000 and 5000 differ at bit 12): lower bound
	got, _ = w.NextExpiry()
	equal(t, got, uint64(4096), "first tick of 5000's level-2 slot")
	if n := w.Advance(got-1, func(*entry) { t.Fatal("fired before NextExpiry") }); n != 0 {
		t.Errorf("Advance to NextExpiry-1 fired %d, want 0", n)
	}
	w.Advance(got, nil)
	got, _ = w.NextExpiry()
	equal(t, got, uint64(4992), "after the cascade: start of 5000's level-1 slot")
	w.Advance(got, nil)
	got, _ = w.NextExpiry()
	equal(t, got, uint64(5000), "level 0: exact")

	near := &entry{}
	w.Insert(near, 4995)
	got, _ = w.NextExpiry()
	equal(t, got, uint64(4995))

	past := &entry{}
	w.Insert(past, 10)
	got, _ = w.NextExpiry()
	equal(t, got, w.Now(), "due entry: Now")
}

// TestFireCallbackMayUseWheel checks "Firing order": a callback may cancel
// an entry the same Advance was about to fire, re-arm itself for later in the
// same walk, and make an entry due, which waits for the next Advance.
func TestFireCallbackMayUseWheel(t *testing.T) {
	w := timerwheel.NewWheel[int](0)
	a, b, c, d := &entry{Value: 1}, &entry{Value: 2}, &entry{Value: 3}, &entry{Value: 4}
	w.Insert(a, 10)
	w.Insert(b, 10)
	w.Insert(c, 20)
	rearms := 0
	var fired []int
	cancelled := false
	w.Advance(100, func(e *entry) {
		fired = append(fired, e.Value)
		switch e.Value {
		case 1, 2: // whichever of a and b fires first cancels the other
			other := b
			if e == b {
				other = a
			}
			cancelled = w.Cancel(other)
		case 3:
			if rearms < 2 {
				rearms++
				w.Insert(e, w.Now()+30) // 50, then 80: same walk
			} else {
				w.Insert(d, w.Now()) // due: next Advance
			}
		}
	})
	if !cancelled {
		t.Error("cancelled is false")
	}
	if len(fired) != 4 {
		t.Errorf("len(fired) = %d, want %d: %v", len(fired), 4, fired)
	}
	equal(t, fired[1:], []int{3, 3, 3})
	equal(t, timerwheel.Where(d), "due")
	if err := w.CheckInvariants(); err != nil {
		t.Fatalf("w.CheckInvariants(): %v", err)
	}
	fired = fired[:0]
	w.Advance(100, func(e *entry) { fired = append(fired, e.Value) })
	equal(t, fired, []int{4})
}

func TestFirePanicLeavesWheelConsistent(t *testing.T) {
	w := timerwheel.NewWheel[int](0)
	for i := range 5 {
		w.Insert(&entry{Value: i}, 7)
	}
	w.Insert(&entry{Value: 9}, 500)
	func() {
		defer func() { equal(t, recover(), "boom") }()
		w.Advance(1000, func(*entry) { panic("boom") })
	}()
	if err := w.CheckInvariants(); err != nil {
		t.Fatalf("w.CheckInvariants(): %v", err)
	}
	equal(t, w.Len(), 5)
	got := map[int]bool{}
	w.Advance(1000, func(e *entry) { got[e.Value] = true })
	if len(got) != 5 {
		t.Errorf("len(got) = %d, want %d: %v", len(got), 5, got)
	}
	if !got[9] {
		t.Error("entry 9 did not fire")
	}
	equal(t, w.Len(), 0)
}

// TestFiresInDeadlineOrder checks that a long Advance fires in nondecreasing
// deadline order, with due entries first.
func TestFiresInDeadlineOrder(t *testing.T) {
	w := timerwheel.NewWheel[int](1 << 20)
	deadlines := []uint64{5, 1<<20 + 1, 1<<20 + 70000, 1<<20 + 64, 1<<40 + 3, 1<<20 + 2, 1<<20 + 1<<36, 1<<20 + 70000, 7}
	entries := make([]entry, len(deadlines))
	for i, d := range deadlines {
		entries[i].Value = i
		w.Insert(&entries[i], d)
	}
	var got []uint64
	w.Advance(math.MaxUint64, func(e *entry) { got = append(got, e.Deadline()) })
	if len(got) != len(deadlines) {
		t.Fatalf("len(got) = %d, want %d: %v", len(got), len(deadlines), got)
	}
	if due := slices.Sorted(slices.Values(got[:2])); !slices.Equal(due, []uint64{5, 7}) {
		t.Errorf("due entries first: first two fired %v, want 5 and 7 in any order", got[:2])
	}
	if !slices.IsSorted(got[2:]) {
		t.Errorf("entries after the due ones fired out of order: %v", got[2:])
	}
}

func TestCancelAll(t *testing.T) {
	w := timerwheel.NewWheel[int](100)
	entries := make([]entry, 6)
	for i, d := range []uint64{1, 150, 5000, 1 << 30, 1 << 50, 100} {
		entries[i].Value = i
		w.Insert(&entries[i], d)
	}
	seen := 0
	n := w.CancelAll(func(e *entry) {
		if e.Pending() {
			t.Error("e.Pending() is true")
		}
		seen++
	})
	equal(t, n, 6)
	equal(t, seen, 6)
	equal(t, w.Len(), 0)
	if err := w.CheckInvariants(); err != nil {
		t.Fatalf("w.CheckInvariants(): %v", err)
	}
	if n := w.Advance(math.MaxUint64, nil); n != 0 {
		t.Errorf("Advance after CancelAll fired %d, want 0", n)
	}
	for i := range entries {
		if w.Cancel(&entries[i]) {
			t.Errorf("Cancel of entry %d after CancelAll", i)
		}
	}
}

// TestEmbeddedEntryZeroAlloc checks that insert, cancel, reset and advance
// of entries embedded in the caller's struct allocate nothing.
func TestEmbeddedEntryZeroAlloc(t *testing.T) {
	type conn struct {
		id      int
		timeout timerwheel.Entry[*conn]
	}
	w := timerwheel.NewWheel[*conn](0)
	conns := make([]conn, 256)
	for i := range conns {
		conns[i].id = i
		conns[i].timeout.Value = &conns[i]
	}
	fired := 0
	fire := func(e *timerwheel.Entry[*conn]) {
		if e.Value.id >= 0 {
			fired++
		}
	}
	now := uint64(0)
	allocs := testing.AllocsPerRun(20, func() {
		for i := range conns {
			w.Insert(&conns[i].timeout, now+uint64(i)*977+1)
		}
		for i := 0; i < len(conns); i += 2 {
			w.Cancel(&conns[i].timeout)
		}
		for i := 1; i < len(conns); i += 4 {
			w.Reset(&conns[i].timeout, now+uint64(i)*31+1)
		}
		now += 1 << 20
		w.Advance(now, fire)
	})
	if allocs != 0 {
		t.Errorf("allocs = %v, want 0", allocs)
	}
	equal(t, fired, 21*128)
}
