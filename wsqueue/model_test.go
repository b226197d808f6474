package wsqueue

// Model-based tests: random operation sequences run against the queues and,
// in lockstep, against the mutex-protected reference (ref_test.go) that states
// the sequential specification. The randomized tests and the fuzz targets
// share the drivers; a driver reads its operations from a byte string.
//
// This file is in the internal test package on purpose: when fuzzing, the
// go command instruments the package and its internal tests for coverage, but
// not the external test package, and this package's code is generic, so it
// is compiled where it is instantiated. Driven from wsqueue_test the fuzzer
// would see no coverage at all.

import (
	"math/rand/v2"
	"testing"
)

// mItems returns n distinct items holding from, from+1, ...
func mItems(from, n int) []*int {
	out := make([]*int, n)
	for i := range out {
		v := from + i
		out[i] = &v
	}
	return out
}

// mVal dereferences an item (nil as -1).
func mVal(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// mVals dereferences items.
func mVals(items []*int) []int {
	out := make([]int, len(items))
	for i, p := range items {
		out[i] = mVal(p)
	}
	return out
}

// mRecorder is an Overflow that keeps a copy of every batch.
type mRecorder struct{ batches [][]int }

func (r *mRecorder) PushOverflow(batch []*int) { r.batches = append(r.batches, mVals(batch)) }

// localModel is three local queues and their references.
type localModel struct {
	tb       testing.TB
	owners   []*Owner[int]
	stealers []*Stealer[int]
	refs     []*MutexDeque[int]
	caps     []int
	recs     []*mRecorder // overflow batches each queue emitted
	want     [][][]int    // overflow batches each queue should have emitted
	checked  []int        // how many of them check has compared
	next     int
}

// newLocalModel builds queues of the given capacities whose indices start at
// start (near 2^32 to cross the wrap).
func newLocalModel(tb testing.TB, caps []int, start uint32) *localModel {
	m := &localModel{tb: tb, caps: caps}
	for i, c := range caps {
		o, s := NewAt[int](c, start+uint32(i)*7)
		m.owners = append(m.owners, o)
		m.stealers = append(m.stealers, s)
		m.refs = append(m.refs, NewMutexDeque[int](c))
		m.recs = append(m.recs, &mRecorder{})
		m.want = append(m.want, nil)
		m.checked = append(m.checked, 0)
	}
	return m
}

// refPush is the specification of Push.
func (m *localModel) refPush(q int, x *int) {
	ref, c := m.refs[q], m.caps[q]
	if ref.Len() < c {
		ref.PushBack(x)
		return
	}
	batch := mVals(append(ref.PopFrontN(nil, c/2), x))
	m.want[q] = append(m.want[q], batch)
}

// step runs one operation, chosen by op and parameterized by arg.
func (m *localModel) step(op, arg byte) {
	n := len(m.owners)
	q := int(arg) % n
	switch op % 5 {
	case 0: // push
		x := mItems(m.next, 1)[0]
		m.next++
		m.owners[q].Push(x, m.recs[q])
		m.refPush(q, x)
	case 1: // push a batch, possibly larger than the queue
		k := int(arg/8) % (m.caps[q] + 3)
		items := mItems(m.next, k)
		m.next += k
		m.owners[q].PushBatch(items, m.recs[q])
		for _, x := range items {
			m.refPush(q, x)
		}
	case 2: // pop
		got, want := m.owners[q].Pop(), m.refs[q].PopFront()
		if got != want {
			m.tb.Fatalf("Pop on queue %d = %d, want %d", q, mVal(got), mVal(want))
		}
	default: // steal from q into another queue
		d := (q + 1 + int(arg/8)%(n-1)) % n
		m.steal(q, d)
	}
	m.check()
}

// steal runs StealInto from queue src into queue dst and its specification.
func (m *localModel) steal(src, dst int) {
	got, k, st := StealIntoN(m.stealers[src], m.owners[dst])
	avail := m.refs[src].Len()
	if avail == 0 {
		if got != nil || st != StatusEmpty {
			m.tb.Fatalf("steal from empty queue %d = %d, %v", src, mVal(got), st)
		}
		return
	}
	n := min(avail-avail/2, m.caps[dst]-m.refs[dst].Len()+1)
	items := m.refs[src].PopFrontN(nil, n)
	if st != StatusTaken || k != n || got != items[n-1] {
		m.tb.Fatalf("steal %d->%d = %d (%d items, %v), want %d (%d items)", src, dst, mVal(got), k, st, mVal(items[n-1]), n)
	}
	for _, x := range items[:n-1] {
		m.refs[dst].PushBack(x)
	}
}

// check compares every observable size and the overflow batches.
func (m *localModel) check() {
	for q, o := range m.owners {
		want := m.refs[q].Len()
		if o.Len() != want || m.stealers[q].Len() != want || o.IsEmpty() != (want == 0) {
			m.tb.Fatalf("queue %d: Len %d / %d, want %d", q, o.Len(), m.stealers[q].Len(), want)
		}
		if o.Free() != m.caps[q]-want {
			m.tb.Fatalf("queue %d: Free %d, want %d", q, o.Free(), m.caps[q]-want)
		}
		if len(m.recs[q].batches) != len(m.want[q]) {
			m.tb.Fatalf("queue %d: %d overflow batches, want %d", q, len(m.recs[q].batches), len(m.want[q]))
		}
		for i := m.checked[q]; i < len(m.want[q]); i++ {
			if b := m.want[q][i]; !equalInts(m.recs[q].batches[i], b) {
				m.tb.Fatalf("queue %d: overflow batch %d = %v, want %v", q, i, m.recs[q].batches[i], b)
			}
		}
		m.checked[q] = len(m.want[q])
	}
}

// finish drains every queue and compares the contents with the references.
func (m *localModel) finish() {
	for q, o := range m.owners {
		var got []int
		for p := o.Pop(); p != nil; p = o.Pop() {
			got = append(got, *p)
		}
		want := mVals(m.refs[q].Items())
		if !equalInts(got, want) {
			m.tb.Fatalf("queue %d drains as %v, want %v", q, got, want)
		}
		if NonNilSlots(m.stealers[q]) != 0 {
			m.tb.Fatalf("queue %d keeps consumed items reachable after draining", q)
		}
	}
}

// equalInts reports whether a and b hold the same values.
func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// smallCaps decodes three capacities among 2, 4, 8, 16 from bits.
func smallCaps(bits uint8) []int {
	return []int{2 << (bits & 3), 2 << (bits >> 2 & 3), 2 << (bits >> 4 & 3)}
}

// runLocalModel plays ops (pairs of op, argument) on a model.
func runLocalModel(tb testing.TB, caps []int, start uint32, ops []byte) {
	m := newLocalModel(tb, caps, start)
	for i := 0; i+1 < len(ops); i += 2 {
		m.step(ops[i], ops[i+1])
	}
	m.finish()
}

// TestLocalQueueMatchesReference runs random operation sequences on three
// local queues of random capacities, with indices starting at 0, just below
// 2^32 or anywhere, against the reference.
func TestLocalQueueMatchesReference(t *testing.T) {
	runs, length := 300, 3000
	if testing.Short() {
		runs = 60
	}
	for seed := range uint64(runs) {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		caps := smallCaps(uint8(r.Uint32()))
		if seed%4 == 0 {
			caps[r.IntN(3)] = DefaultCapacity
		}
		starts := []uint32{0, -uint32(r.IntN(600)), r.Uint32()}
		ops := make([]byte, 2*length)
		for i := range ops {
			ops[i] = byte(r.Uint32())
		}
		runLocalModel(t, caps, starts[seed%3], ops)
	}
}

// FuzzLocalQueue drives the local-queue model with fuzzed capacities, start
// index and operations.
func FuzzLocalQueue(f *testing.F) {
	f.Add(uint8(0), uint32(0), []byte{0, 0, 0, 0, 0, 0, 3, 0, 2, 0})
	f.Add(uint8(0x15), ^uint32(0)-2, []byte{1, 0xf8, 3, 1, 2, 1, 0, 2, 4, 2, 2, 0})
	f.Add(uint8(0x3f), ^uint32(0)-39, []byte("push and steal across the wrap, over and over"))
	f.Fuzz(func(t *testing.T, capBits uint8, start uint32, ops []byte) {
		runLocalModel(t, smallCaps(capBits), start, ops)
	})
}

// runDequeModel plays ops (pairs of op, argument) on a deque of the given
// initial capacity and on the reference.
func runDequeModel(tb testing.TB, initial int, ops []byte) {
	o, s := NewDeque[int](initial)
	ref := NewMutexDeque[int](initial)
	next := 0
	for i := 0; i+1 < len(ops); i += 2 {
		switch op, arg := ops[i], ops[i+1]; op % 5 {
		case 0, 1: // push 1..8 items
			for range int(arg)%8 + 1 {
				x := mItems(next, 1)[0]
				next++
				o.Push(x)
				ref.PushBack(x)
			}
		case 2: // pop
			if got, want := o.Pop(), ref.PopBack(); got != want {
				tb.Fatalf("Pop = %d, want %d", mVal(got), mVal(want))
			}
		case 3: // steal
			got, r := s.Steal()
			want := ref.PopFront()
			if got != want || (want == nil) != (r == StealEmpty) || r == StealRetry {
				tb.Fatalf("Steal = %d, %v, want %d", mVal(got), r, mVal(want))
			}
		default: // steal, retrying
			if got, want := s.StealLoop(), ref.PopFront(); got != want {
				tb.Fatalf("StealLoop = %d, want %d", mVal(got), mVal(want))
			}
		}
		if o.Len() != ref.Len() || s.Len() != ref.Len() || o.IsEmpty() != (ref.Len() == 0) {
			tb.Fatalf("Len = %d / %d, want %d", o.Len(), s.Len(), ref.Len())
		}
		if c := o.Capacity(); c < o.Len() || c&(c-1) != 0 {
			tb.Fatalf("Capacity %d with %d items", c, o.Len())
		}
	}
	want := ref.Items()
	for i := len(want) - 1; i >= 0; i-- {
		if got := o.Pop(); got != want[i] {
			tb.Fatalf("drain: Pop = %d, want %d", mVal(got), mVal(want[i]))
		}
	}
	if o.Pop() != nil || DequeNonNilSlots(s) != 0 {
		tb.Fatalf("deque not empty and clear after draining")
	}
}

// TestDequeMatchesReference runs random operation sequences, with bursts of
// pushes that make the deque grow, against the reference.
func TestDequeMatchesReference(t *testing.T) {
	runs, length := 300, 3000
	if testing.Short() {
		runs = 60
	}
	for seed := range uint64(runs) {
		r := rand.New(rand.NewPCG(seed, 0xdec))
		ops := make([]byte, 2*length)
		for i := range ops {
			ops[i] = byte(r.Uint32())
		}
		runDequeModel(t, 1<<r.IntN(5), ops)
	}
}

// FuzzDeque drives the deque model with a fuzzed initial capacity and
// operations.
func FuzzDeque(f *testing.F) {
	f.Add(uint8(1), []byte{0, 0, 2, 0, 3, 0})
	f.Add(uint8(2), []byte{0, 31, 3, 0, 4, 0, 2, 0, 0, 5, 2, 0, 3, 0})
	f.Add(uint8(0), []byte("grow, steal and pop in every order"))
	f.Fuzz(func(t *testing.T, initial uint8, ops []byte) {
		runDequeModel(t, int(initial%65), ops)
	})
}
