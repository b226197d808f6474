package timerwheel_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.Equal(t, len(r.fired)-start, n, "Advance's count")
	require.NoError(t, r.w.CheckInvariants())
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
		require.True(t, ok, "panic value %v is not an error", r)
		require.True(t, errors.Is(err, want), "panic %v, want %v", err, want)
		require.Contains(t, err.Error(), "timerwheel: ")
	}()
	f()
}

func TestZeroWheelIsUsable(t *testing.T) {
	var w timerwheel.Wheel[int]
	e := &entry{Value: 7}
	w.Insert(e, 3)
	var got []int
	w.Advance(3, func(e *entry) { got = append(got, e.Value) })
	assert.Equal(t, []int{7}, got)
	assert.Equal(t, uint64(3), w.Now())
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
			assert.False(t, r.w.Cancel(e))
			assert.False(t, e.Pending())
		}},
		{"cancel pending returns true and it never fires", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			assert.True(t, e.Pending())
			assert.True(t, r.w.Cancel(e))
			assert.False(t, e.Pending())
			assert.Empty(t, r.advance(t, 1000))
			assert.Equal(t, 0, r.w.Len())
		}},
		{"double cancel: true then false", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			assert.True(t, r.w.Cancel(e))
			assert.False(t, r.w.Cancel(e))
		}},
		{"cancel after fire returns false", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			assert.Equal(t, []int{1}, r.advance(t, 150))
			assert.False(t, e.Pending())
			assert.False(t, r.w.Cancel(e))
		}},
		{"reinsert after fire fires again", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			assert.Equal(t, []int{1}, r.advance(t, 150))
			r.w.Insert(e, 300)
			assert.Empty(t, r.advance(t, 299))
			assert.Equal(t, []int{1}, r.advance(t, 300))
		}},
		{"reinsert after cancel fires at the new deadline", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			r.w.Cancel(e)
			r.w.Insert(e, 5000)
			assert.Empty(t, r.advance(t, 4999))
			assert.Equal(t, []int{1}, r.advance(t, 5000))
		}},
		{"past deadline is due and fires on the next advance", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 40)
			assert.Equal(t, "due", timerwheel.Where(e))
			assert.Equal(t, []int{1}, r.advance(t, 100))
			assert.Equal(t, uint64(100), r.ticks[0], "fires at Now, not before it")
		}},
		{"deadline equal to now is due", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 100)
			assert.Equal(t, "due", timerwheel.Where(e))
			assert.Equal(t, []int{1}, r.advance(t, 100))
		}},
		{"due entry fires even when advance goes backwards", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 0)
			assert.Equal(t, []int{1}, r.advance(t, 5))
			assert.Equal(t, uint64(100), r.w.Now(), "time never moves backwards")
		}},
		{"cancel due entry", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 10)
			assert.True(t, r.w.Cancel(e))
			assert.Empty(t, r.advance(t, 100))
		}},
		{"reset pending returns true and moves it", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			assert.True(t, r.w.Reset(e, 7000))
			assert.Empty(t, r.advance(t, 6999))
			assert.Equal(t, []int{1}, r.advance(t, 7000))
		}},
		{"reset earlier", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 1<<30)
			assert.True(t, r.w.Reset(e, 101))
			assert.Equal(t, []int{1}, r.advance(t, 101))
			assert.Empty(t, r.advance(t, 1<<31))
		}},
		{"reset idle returns false and inserts", func(t *testing.T, r *recorder, e *entry) {
			assert.False(t, r.w.Reset(e, 150))
			assert.True(t, e.Pending())
			assert.Equal(t, []int{1}, r.advance(t, 150))
		}},
		{"reset after fire returns false and fires again", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			r.advance(t, 150)
			assert.False(t, r.w.Reset(e, 160))
			assert.Equal(t, []int{1}, r.advance(t, 160))
		}},
		{"reset into the past makes it due", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 1<<20)
			assert.True(t, r.w.Reset(e, 3))
			assert.Equal(t, "due", timerwheel.Where(e))
			assert.Equal(t, []int{1}, r.advance(t, 100))
		}},
		{"deadline keeps its value after fire", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, 150)
			r.advance(t, 1000)
			assert.Equal(t, uint64(150), e.Deadline())
		}},
		{"max deadline goes to overflow and fires at max", func(t *testing.T, r *recorder, e *entry) {
			r.w.Insert(e, math.MaxUint64)
			assert.Equal(t, "overflow", timerwheel.Where(e))
			assert.Empty(t, r.advance(t, math.MaxUint64-1))
			assert.Equal(t, []int{1}, r.advance(t, math.MaxUint64))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(100)
			tc.run(t, r, &entry{Value: 1})
			require.NoError(t, r.w.CheckInvariants())
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
	require.NoError(t, a.CheckInvariants())
	require.NoError(t, b.CheckInvariants())
	assert.Equal(t, 0, b.Len())
	assert.Equal(t, uint64(10), a.Now())
	b.Insert(e, 20)
	assert.Equal(t, 1, b.Advance(20, nil))
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
			require.NoError(t, r.w.CheckInvariants())
			require.Empty(t, r.advance(t, d-1), "start %d deadline %d fired early", start, d)
			require.Equal(t, []int{1}, r.advance(t, d), "start %d deadline %d", start, d)
			require.Equal(t, []uint64{d}, r.ticks, "Now during fire")
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
		assert.Equal(t, tc.where, timerwheel.Where(e), "now %d deadline %d", tc.now, tc.deadline)
		require.NoError(t, w.CheckInvariants())
	}
}

func TestNextExpiry(t *testing.T) {
	w := timerwheel.NewWheel[int](1000)
	_, ok := w.NextExpiry()
	assert.False(t, ok, "empty wheel")

	far := &entry{}
	w.Insert(far, 1000+1<<40) // overflow only: exact
	got, ok := w.NextExpiry()
	assert.True(t, ok)
	assert.Equal(t, uint64(1000+1<<40), got)

	mid := &entry{}
	w.Insert(mid, 5000) // level 2 (1000 and 5000 differ at bit 12): lower bound
	got, _ = w.NextExpiry()
	assert.Equal(t, uint64(4096), got, "first tick of 5000's level-2 slot")
	assert.Zero(t, w.Advance(got-1, func(*entry) { t.Fatal("fired before NextExpiry") }))
	w.Advance(got, nil)
	got, _ = w.NextExpiry()
	assert.Equal(t, uint64(4992), got, "after the cascade: start of 5000's level-1 slot")
	w.Advance(got, nil)
	got, _ = w.NextExpiry()
	assert.Equal(t, uint64(5000), got, "level 0: exact")

	near := &entry{}
	w.Insert(near, 4995)
	got, _ = w.NextExpiry()
	assert.Equal(t, uint64(4995), got)

	past := &entry{}
	w.Insert(past, 10)
	got, _ = w.NextExpiry()
	assert.Equal(t, w.Now(), got, "due entry: Now")
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
	assert.True(t, cancelled)
	assert.Len(t, fired, 4)
	assert.Equal(t, []int{3, 3, 3}, fired[1:])
	assert.Equal(t, "due", timerwheel.Where(d))
	require.NoError(t, w.CheckInvariants())
	fired = fired[:0]
	w.Advance(100, func(e *entry) { fired = append(fired, e.Value) })
	assert.Equal(t, []int{4}, fired)
}

func TestFirePanicLeavesWheelConsistent(t *testing.T) {
	w := timerwheel.NewWheel[int](0)
	for i := range 5 {
		w.Insert(&entry{Value: i}, 7)
	}
	w.Insert(&entry{Value: 9}, 500)
	func() {
		defer func() { assert.Equal(t, "boom", recover()) }()
		w.Advance(1000, func(*entry) { panic("boom") })
	}()
	require.NoError(t, w.CheckInvariants())
	assert.Equal(t, 5, w.Len())
	got := map[int]bool{}
	w.Advance(1000, func(e *entry) { got[e.Value] = true })
	assert.Len(t, got, 5)
	assert.True(t, got[9])
	assert.Equal(t, 0, w.Len())
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
	require.Len(t, got, len(deadlines))
	assert.ElementsMatch(t, []uint64{5, 7}, got[:2], "due entries first")
	assert.IsNonDecreasing(t, got[2:])
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
		assert.False(t, e.Pending())
		seen++
	})
	assert.Equal(t, 6, n)
	assert.Equal(t, 6, seen)
	assert.Equal(t, 0, w.Len())
	require.NoError(t, w.CheckInvariants())
	assert.Zero(t, w.Advance(math.MaxUint64, nil))
	for i := range entries {
		assert.False(t, w.Cancel(&entries[i]))
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
	assert.Zero(t, allocs)
	assert.Equal(t, 21*128, fired)
}
