package wsqueue_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	. "github.com/blitz-go/blitz/wsqueue"
)

// ints returns n distinct items holding from, from+1, ...
func ints(from, n int) []*int {
	out := make([]*int, n)
	for i := range out {
		v := from + i
		out[i] = &v
	}
	return out
}

// vals dereferences items (nil as -1) so that failures print values.
func vals(items []*int) []int {
	out := make([]int, len(items))
	for i, p := range items {
		out[i] = -1
		if p != nil {
			out[i] = *p
		}
	}
	return out
}

// val dereferences one item (nil as -1).
func val(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// recorder is an Overflow that keeps a copy of every batch.
type recorder struct{ batches [][]int }

func (r *recorder) PushOverflow(batch []*int) { r.batches = append(r.batches, vals(batch)) }

// all returns every overflowed value in call order.
func (r *recorder) all() []int {
	var out []int
	for _, b := range r.batches {
		out = append(out, b...)
	}
	return out
}

// popAll pops o until it is empty.
func popAll(o *Owner[int]) []int {
	var out []int
	for p := o.Pop(); p != nil; p = o.Pop() {
		out = append(out, *p)
	}
	return out
}

func TestNewSizeRejectsInvalidCapacity(t *testing.T) {
	bad := []int{-4, 0, 1, 3, 6, 100, 257}
	if strconv.IntSize == 64 {
		shift := 31 // a variable, so that 32-bit platforms compile this
		bad = append(bad, 1<<(shift+1), 3<<shift)
	}
	for _, c := range bad {
		o, s, err := NewSize[int](c)
		if err == nil {
			t.Fatalf("capacity %d: err is nil, want an error", c)
		}
		if !errors.Is(err, ErrCapacity) {
			t.Errorf("capacity %d: %v does not wrap ErrCapacity", c, err)
		}
		if !strings.HasPrefix(err.Error(), "wsqueue: ") {
			t.Errorf("message %q", err)
		}
		if !strings.Contains(err.Error(), strconv.Itoa(c)) {
			t.Errorf("%q does not contain %q", err.Error(), strconv.Itoa(c))
		}
		if o != nil {
			t.Errorf("o = %v, want nil", o)
		}
		if s != nil {
			t.Errorf("s = %v, want nil", s)
		}
	}
	for _, c := range []int{2, 4, 1024} {
		o, s, err := NewSize[int](c)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, o.Capacity(), c)
		equal(t, s.Capacity(), c)
	}
}

func TestNewHasDefaultCapacityAndIsEmpty(t *testing.T) {
	o, s := New[int]()
	equal(t, o.Capacity(), DefaultCapacity)
	equal(t, DefaultCapacity, 256)
	if !o.IsEmpty() {
		t.Error("o.IsEmpty() is false")
	}
	if !s.IsEmpty() {
		t.Error("s.IsEmpty() is false")
	}
	equal(t, o.Free(), DefaultCapacity)
	if got := o.Pop(); got != nil {
		t.Errorf("o.Pop() = &%d, want nil", *got)
	}
}

func TestMisusePanicsWithPackagePrefix(t *testing.T) {
	o, s := New[int]()
	panicsWith(t, ErrNilItem, func() { o.Push(nil, nil) })
	panicsWith(t, ErrNilItem, func() { o.PushBatch([]*int{ints(0, 1)[0], nil}, nil) })
	if !o.IsEmpty() {
		t.Error("PushBatch must check every item before pushing any")
	}
	panicsWith(t, ErrStealSelf, func() { s.StealInto(o) })

	full, _, err := NewSize[int](2)
	if err != nil {
		t.Fatal(err)
	}
	full.PushBatch(ints(0, 2), nil)
	panicsWith(t, ErrNilOverflow, func() { full.Push(ints(2, 1)[0], nil) })
}

func TestPushPopIsFIFO(t *testing.T) {
	o, s := New[int]()
	for _, p := range ints(0, 100) {
		o.Push(p, nil)
	}
	equal(t, o.Len(), 100)
	equal(t, s.Len(), 100)
	equal(t, o.Free(), DefaultCapacity-100)
	got := popAll(o)
	for i, v := range got {
		if v != i {
			t.Fatalf("pop %d = %d, want %d", i, v, i)
		}
	}
	if len(got) != 100 {
		t.Errorf("len(got) = %d, want %d: %v", len(got), 100, got)
	}
}

func TestFullPushOverflowsOldestHalfPlusItemInOneBatch(t *testing.T) {
	o, _, err := NewSize[int](8)
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	for _, p := range ints(0, 9) {
		o.Push(p, &rec)
	}
	if len(rec.batches) != 1 {
		t.Fatalf("one PushOverflow call: len(rec.batches) = %d, want %d: %v", len(rec.batches), 1, rec.batches)
	}
	equal(t, rec.batches[0], []int{0, 1, 2, 3, 8})
	equal(t, o.Len(), 4)
	equal(t, o.Free(), 4)
	equal(t, popAll(o), []int{4, 5, 6, 7})
}

func TestOverflowBatchIsClearedAfterTheCall(t *testing.T) {
	o, _, err := NewSize[int](4)
	if err != nil {
		t.Fatal(err)
	}
	var kept []*int
	ov := OverflowFunc[int](func(batch []*int) { kept = batch }) // retains: misuse, to observe reuse
	for _, p := range ints(0, 5) {
		o.Push(p, ov)
	}
	if len(kept) != 3 {
		t.Fatalf("len(kept) = %d, want %d: %v", len(kept), 3, kept)
	}
	equal(t, vals(kept), []int{-1, -1, -1}, "the owner clears and reuses the batch; Overflow must copy")
}

func TestRepeatedOverflowLosesNothing(t *testing.T) {
	for _, c := range []int{2, 4, 16} {
		o, _, err := NewSize[int](c)
		if err != nil {
			t.Fatal(err)
		}
		var rec recorder
		for _, p := range ints(0, 1000) {
			o.Push(p, &rec)
		}
		got := append(rec.all(), popAll(o)...)
		assertPermutation(t, got, 1000)
		for _, b := range rec.batches {
			if len(b) != c/2+1 {
				t.Errorf("capacity %d: every batch is half the queue plus the item: len(b) = %d, want %d: %v", c, len(b), c/2+1, b)
			}
		}
	}
}

// assertPermutation checks that got holds each of 0..n-1 exactly once.
func assertPermutation(t *testing.T, got []int, n int) {
	t.Helper()
	seen := make([]int, n)
	for _, v := range got {
		if v < 0 || v >= n {
			t.Fatalf("value %d out of range", v)
		}
		seen[v]++
	}
	for v, c := range seen {
		if c != 1 {
			t.Fatalf("value %d taken %d times", v, c)
		}
	}
}

func TestPushBatchFillsThenOverflowsLikeRepeatedPush(t *testing.T) {
	a, _, err := NewSize[int](8)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := NewSize[int](8)
	if err != nil {
		t.Fatal(err)
	}
	var ra, rb recorder
	items := ints(0, 21)
	a.PushBatch(items[:3], &ra)
	a.PushBatch(items[3:], &ra)
	for _, p := range items {
		b.Push(p, &rb)
	}
	equal(t, ra.batches, rb.batches)
	equal(t, popAll(a), popAll(b))
}

func TestStealIntoTakesOldestHalfRoundedUp(t *testing.T) {
	for n := 1; n <= 9; n++ {
		src, s, err := NewSize[int](16)
		if err != nil {
			t.Fatal(err)
		}
		dst, _ := New[int]()
		src.PushBatch(ints(0, n), nil)
		got, k, st := StealIntoN(s, dst)
		want := n - n/2
		if st != StatusTaken {
			t.Fatalf("%d items: status %v, want StatusTaken", n, st)
		}
		if k != want {
			t.Fatalf("%d items: took %d, want %d", n, k, want)
		}
		equal(t, val(got), want-1, "the newest stolen item is returned")
		equal(t, nilIfEmpty(popAll(dst)), vals(ints(0, want-1)), "the rest go to dst, in order")
		equal(t, nilIfEmpty(popAll(src)), vals(ints(want, n-want)))
	}
}

// nilIfEmpty maps empty slices to nil for comparisons.
func nilIfEmpty(v []int) []int {
	if len(v) == 0 {
		return []int{}
	}
	return v
}

func TestStealIntoNeverOverflowsDestination(t *testing.T) {
	src, s := New[int]()
	src.PushBatch(ints(0, 100), nil)
	dst, _, err := NewSize[int](4)
	if err != nil {
		t.Fatal(err)
	}
	dst.PushBatch(ints(1000, 3), nil) // room for 1
	got, k, st := StealIntoN(s, dst)
	if st != StatusTaken {
		t.Fatalf("status %v, want StatusTaken", st)
	}
	equal(t, k, 2, "room in dst plus the returned item")
	equal(t, val(got), 1)
	equal(t, popAll(dst), []int{1000, 1001, 1002, 0})

	dst.PushBatch(ints(2000, 4), nil) // no room: still steals the one it returns
	got, k, st = StealIntoN(s, dst)
	if st != StatusTaken {
		t.Fatalf("no room in dst: status %v, want StatusTaken", st)
	}
	equal(t, k, 1)
	equal(t, val(got), 2)
	equal(t, dst.Len(), 4)
}

func TestStealFromEmptyReportsEmpty(t *testing.T) {
	_, s := New[int]()
	dst, _ := New[int]()
	got, k, st := StealIntoN(s, dst)
	if got != nil {
		t.Errorf("got = &%d, want nil", *got)
	}
	if k != 0 {
		t.Errorf("k = %v, want 0", k)
	}
	equal(t, st, StatusEmpty)
	if got := s.StealInto(dst); got != nil {
		t.Errorf("s.StealInto(dst) = &%d, want nil", *got)
	}
}

func TestStealBetweenQueuesOfDifferentCapacity(t *testing.T) {
	big, bs := New[int]()
	small, ss, err := NewSize[int](2)
	if err != nil {
		t.Fatal(err)
	}
	big.PushBatch(ints(0, 200), nil)
	equal(t, val(bs.StealInto(small)), 2, "small has room 2: takes 3, keeps 2, returns 1")
	equal(t, small.Len(), 2)
	equal(t, big.Len(), 197)
	equal(t, val(ss.StealInto(big)), 0, "takes half of 2, returns it")
	equal(t, small.Len(), 1)
	equal(t, big.Len(), 197)
}

// TestIndicesWrapPast2To32 drives every operation across the 2^32 boundary of
// the uint32 indices ("ABA and index wrap"): only differences of indices are
// used, so nothing changes at the wrap.
func TestIndicesWrapPast2To32(t *testing.T) {
	for _, c := range []int{2, 4, 8, 256} {
		for _, back := range []uint32{1, 2, uint32(c / 2), uint32(c), uint32(c) + 3} {
			o, s := NewAt[int](c, -back) // start = 2^32 - back
			dst, _ := NewAt[int](c, -back/2)
			var rec recorder
			next := 0
			var taken []int
			for round := range 4 * c {
				o.Push(ints(next, 1)[0], &rec)
				next++
				if round%3 == 0 {
					if p := o.Pop(); p != nil {
						taken = append(taken, *p)
					}
				}
				if round%5 == 0 {
					if p := s.StealInto(dst); p != nil {
						taken = append(taken, *p)
					}
					taken = append(taken, popAll(dst)...)
				}
				if got := o.Len(); got > c {
					t.Fatalf("o.Len() = %v, want <= %v", got, c)
				}
				if free, n := o.Free(), o.Len(); free != c-n {
					t.Fatalf("no steal in progress: free = capacity - len: Free() = %d, Len() = %d, capacity %d", free, n, c)
				}
			}
			taken = append(taken, popAll(o)...)
			taken = append(taken, rec.all()...)
			assertPermutation(t, taken, next)
			_, _, tail := Indices(s)
			if tail >= uint32(1<<31) {
				t.Errorf("capacity %d start -%d: tail wrapped: tail = %v, want < %v", c, back, tail, uint32(1<<31))
			}
		}
	}
}

// TestConsumedSlotsAreClearedWhenOwnerFindsQueueEmpty checks that the ring
// keeps no popped, stolen or overflowed item reachable once the owner has seen
// the queue empty (package doc, section "Garbage retention").
func TestConsumedSlotsAreClearedWhenOwnerFindsQueueEmpty(t *testing.T) {
	o, s, err := NewSize[int](8)
	if err != nil {
		t.Fatal(err)
	}
	dst, ds := New[int]()
	var rec recorder
	for _, p := range ints(0, 13) { // overflows once
		o.Push(p, &rec)
	}
	s.StealInto(dst)
	o.Pop()
	if got := NonNilSlots(s); got <= 0 {
		t.Errorf("consumed slots are only cleared lazily: NonNilSlots(s) = %v, want > 0", got)
	}
	popAll(o)
	if got := NonNilSlots(s); got != 0 {
		t.Errorf("NonNilSlots(s) = %v, want 0", got)
	}
	popAll(dst)
	if got := NonNilSlots(ds); got != 0 {
		t.Errorf("NonNilSlots(ds) = %v, want 0", got)
	}
}
