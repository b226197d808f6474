package wsqueue_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.Error(t, err, "capacity %d", c)
		assert.True(t, errors.Is(err, ErrCapacity), "capacity %d: %v does not wrap ErrCapacity", c, err)
		assert.True(t, strings.HasPrefix(err.Error(), "wsqueue: "), "message %q", err)
		assert.Contains(t, err.Error(), strconv.Itoa(c))
		assert.Nil(t, o)
		assert.Nil(t, s)
	}
	for _, c := range []int{2, 4, 1024} {
		o, s, err := NewSize[int](c)
		require.NoError(t, err)
		assert.Equal(t, c, o.Capacity())
		assert.Equal(t, c, s.Capacity())
	}
}

func TestNewHasDefaultCapacityAndIsEmpty(t *testing.T) {
	o, s := New[int]()
	assert.Equal(t, DefaultCapacity, o.Capacity())
	assert.Equal(t, 256, DefaultCapacity)
	assert.True(t, o.IsEmpty())
	assert.True(t, s.IsEmpty())
	assert.Equal(t, DefaultCapacity, o.Free())
	assert.Nil(t, o.Pop())
}

func TestMisusePanicsWithPackagePrefix(t *testing.T) {
	o, s := New[int]()
	assert.PanicsWithValue(t, "wsqueue: push of nil item", func() { o.Push(nil, nil) })
	assert.PanicsWithValue(t, "wsqueue: push of nil item", func() { o.PushBatch([]*int{ints(0, 1)[0], nil}, nil) })
	assert.True(t, o.IsEmpty(), "PushBatch must check every item before pushing any")
	assert.PanicsWithValue(t, "wsqueue: steal into the queue being stolen from", func() { s.StealInto(o) })

	full, _, err := NewSize[int](2)
	require.NoError(t, err)
	full.PushBatch(ints(0, 2), nil)
	assert.PanicsWithValue(t, "wsqueue: queue full and overflow is nil", func() { full.Push(ints(2, 1)[0], nil) })
}

func TestPushPopIsFIFO(t *testing.T) {
	o, s := New[int]()
	for _, p := range ints(0, 100) {
		o.Push(p, nil)
	}
	assert.Equal(t, 100, o.Len())
	assert.Equal(t, 100, s.Len())
	assert.Equal(t, DefaultCapacity-100, o.Free())
	got := popAll(o)
	for i, v := range got {
		require.Equal(t, i, v)
	}
	assert.Len(t, got, 100)
}

func TestFullPushOverflowsOldestHalfPlusItemInOneBatch(t *testing.T) {
	o, _, err := NewSize[int](8)
	require.NoError(t, err)
	var rec recorder
	for _, p := range ints(0, 9) {
		o.Push(p, &rec)
	}
	require.Len(t, rec.batches, 1, "one PushOverflow call")
	assert.Equal(t, []int{0, 1, 2, 3, 8}, rec.batches[0])
	assert.Equal(t, 4, o.Len())
	assert.Equal(t, 4, o.Free())
	assert.Equal(t, []int{4, 5, 6, 7}, popAll(o))
}

func TestOverflowBatchIsClearedAfterTheCall(t *testing.T) {
	o, _, err := NewSize[int](4)
	require.NoError(t, err)
	var kept []*int
	ov := OverflowFunc[int](func(batch []*int) { kept = batch }) // retains: misuse, to observe reuse
	for _, p := range ints(0, 5) {
		o.Push(p, ov)
	}
	require.Len(t, kept, 3)
	assert.Equal(t, []int{-1, -1, -1}, vals(kept), "the owner clears and reuses the batch; Overflow must copy")
}

func TestRepeatedOverflowLosesNothing(t *testing.T) {
	for _, c := range []int{2, 4, 16} {
		o, _, err := NewSize[int](c)
		require.NoError(t, err)
		var rec recorder
		for _, p := range ints(0, 1000) {
			o.Push(p, &rec)
		}
		got := append(rec.all(), popAll(o)...)
		assertPermutation(t, got, 1000)
		for _, b := range rec.batches {
			assert.Len(t, b, c/2+1, "capacity %d: every batch is half the queue plus the item", c)
		}
	}
}

// assertPermutation checks that got holds each of 0..n-1 exactly once.
func assertPermutation(t *testing.T, got []int, n int) {
	t.Helper()
	seen := make([]int, n)
	for _, v := range got {
		require.True(t, v >= 0 && v < n, "value %d out of range", v)
		seen[v]++
	}
	for v, c := range seen {
		require.Equal(t, 1, c, "value %d taken %d times", v, c)
	}
}

func TestPushBatchFillsThenOverflowsLikeRepeatedPush(t *testing.T) {
	a, _, err := NewSize[int](8)
	require.NoError(t, err)
	b, _, err := NewSize[int](8)
	require.NoError(t, err)
	var ra, rb recorder
	items := ints(0, 21)
	a.PushBatch(items[:3], &ra)
	a.PushBatch(items[3:], &ra)
	for _, p := range items {
		b.Push(p, &rb)
	}
	assert.Equal(t, rb.batches, ra.batches)
	assert.Equal(t, popAll(b), popAll(a))
}

func TestStealIntoTakesOldestHalfRoundedUp(t *testing.T) {
	for n := 1; n <= 9; n++ {
		src, s, err := NewSize[int](16)
		require.NoError(t, err)
		dst, _ := New[int]()
		src.PushBatch(ints(0, n), nil)
		got, k, st := StealIntoN(s, dst)
		want := n - n/2
		require.Equal(t, StatusTaken, st)
		require.Equal(t, want, k)
		assert.Equal(t, want-1, val(got), "the newest stolen item is returned")
		assert.Equal(t, vals(ints(0, want-1)), nilIfEmpty(popAll(dst)), "the rest go to dst, in order")
		assert.Equal(t, vals(ints(want, n-want)), nilIfEmpty(popAll(src)))
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
	require.NoError(t, err)
	dst.PushBatch(ints(1000, 3), nil) // room for 1
	got, k, st := StealIntoN(s, dst)
	require.Equal(t, StatusTaken, st)
	assert.Equal(t, 2, k, "room in dst plus the returned item")
	assert.Equal(t, 1, val(got))
	assert.Equal(t, []int{1000, 1001, 1002, 0}, popAll(dst))

	dst.PushBatch(ints(2000, 4), nil) // no room: still steals the one it returns
	got, k, st = StealIntoN(s, dst)
	require.Equal(t, StatusTaken, st)
	assert.Equal(t, 1, k)
	assert.Equal(t, 2, val(got))
	assert.Equal(t, 4, dst.Len())
}

func TestStealFromEmptyReportsEmpty(t *testing.T) {
	_, s := New[int]()
	dst, _ := New[int]()
	got, k, st := StealIntoN(s, dst)
	assert.Nil(t, got)
	assert.Zero(t, k)
	assert.Equal(t, StatusEmpty, st)
	assert.Nil(t, s.StealInto(dst))
}

func TestStealBetweenQueuesOfDifferentCapacity(t *testing.T) {
	big, bs := New[int]()
	small, ss, err := NewSize[int](2)
	require.NoError(t, err)
	big.PushBatch(ints(0, 200), nil)
	assert.Equal(t, 2, val(bs.StealInto(small)), "small has room 2: takes 3, keeps 2, returns 1")
	assert.Equal(t, 2, small.Len())
	assert.Equal(t, 197, big.Len())
	assert.Equal(t, 0, val(ss.StealInto(big)), "takes half of 2, returns it")
	assert.Equal(t, 1, small.Len())
	assert.Equal(t, 197, big.Len())
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
				require.LessOrEqual(t, o.Len(), c)
				require.Equal(t, c-o.Len(), o.Free(), "no steal in progress: free = capacity - len")
			}
			taken = append(taken, popAll(o)...)
			taken = append(taken, rec.all()...)
			assertPermutation(t, taken, next)
			_, _, tail := Indices(s)
			assert.Less(t, tail, uint32(1<<31), "capacity %d start -%d: tail wrapped", c, back)
		}
	}
}

// TestConsumedSlotsAreClearedWhenOwnerFindsQueueEmpty checks that the ring
// keeps no popped, stolen or overflowed item reachable once the owner has seen
// the queue empty (package doc, section "Garbage retention").
func TestConsumedSlotsAreClearedWhenOwnerFindsQueueEmpty(t *testing.T) {
	o, s, err := NewSize[int](8)
	require.NoError(t, err)
	dst, ds := New[int]()
	var rec recorder
	for _, p := range ints(0, 13) { // overflows once
		o.Push(p, &rec)
	}
	s.StealInto(dst)
	o.Pop()
	assert.Positive(t, NonNilSlots(s), "consumed slots are only cleared lazily")
	popAll(o)
	assert.Zero(t, NonNilSlots(s))
	popAll(dst)
	assert.Zero(t, NonNilSlots(ds))
}
