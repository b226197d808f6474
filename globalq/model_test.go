package globalq

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The model test: random operation sequences run against each variant and a
// slice reference; every answer and the length must agree after every step.
// It lives in the internal package because the fuzzer instruments only the
// package under test, and generic code is compiled where it is instantiated.

// refBatch is the batch formula of the package doc, written out again
// independently of batchSize.
func refBatch(n, workers, room int) int {
	if workers < 1 {
		workers = 1
	}
	share := n / workers
	if share < 4 {
		share = 4
	}
	return min(room, 64, share, n)
}

// runModel interprets ops as operations on q and on a reference slice, and
// fails t on the first disagreement. With fifo false the reference is a
// multiset (sharded queues are FIFO per shard only).
func runModel(t *testing.T, q queue, fifo bool, ops []byte) {
	var ref []*node
	closed := false
	id := 0
	fresh := func(k int) []*node {
		es := make([]*node, k)
		for i := range es {
			id++
			es[i] = &node{id: id}
		}
		return es
	}
	take := func(e *node) {
		require.NotNil(t, e)
		require.Nil(t, e.next, "popped element keeps its link")
		i := 0
		if !fifo {
			i = slices.Index(ref, e)
		}
		require.GreaterOrEqual(t, i, 0, "popped element %d not queued", e.id)
		require.Same(t, ref[i], e)
		ref = slices.Delete(ref, i, i+1)
	}
	arg := func(i int) int {
		if i < len(ops) {
			return int(ops[i])
		}
		return 0
	}
	for i := 0; i < len(ops); i += 3 {
		a, b := arg(i+1), arg(i+2)
		switch ops[i] % 8 {
		case 0: // Push
			e := fresh(1)[0]
			require.Equal(t, !closed, q.Push(e))
			if closed {
				require.Nil(t, e.next)
			} else {
				ref = append(ref, e)
			}
		case 1: // PushSlice
			es := fresh(a % 10)
			ok := q.PushSlice(es)
			require.Equal(t, !closed, ok)
			if ok {
				ref = append(ref, es...)
			} else {
				for _, e := range es {
					require.Nil(t, e.next, "rejected element linked")
				}
			}
		case 2: // PushOverflow: accepted even after Close
			es := fresh(a % 10)
			q.PushOverflow(es)
			ref = append(ref, es...)
		case 3: // Pop
			e := q.Pop()
			if len(ref) == 0 {
				require.Nil(t, e)
			} else {
				take(e)
			}
		case 4, 5: // PopBatch
			dst := make([]*node, a%70)
			workers := b%6 - 1 // -1..4
			if b&0x80 != 0 {
				workers = b // many workers
			}
			want := refBatch(len(ref), workers, len(dst))
			n := q.PopBatch(dst, workers)
			require.Equal(t, want, n, "PopBatch(len=%d, workers=%d, dst=%d)", len(ref), workers, len(dst))
			for _, e := range dst[:n] {
				take(e)
			}
			for _, e := range dst[n:] {
				require.Nil(t, e, "PopBatch wrote past n")
			}
		case 6: // Close, rarely
			if a%8 == 0 {
				q.Close()
				closed = true
			}
			require.Equal(t, closed, q.Closed())
		case 7: // Drain, rarely
			if a%8 == 0 {
				var got []*node
				n := q.Drain(func(e *node) { got = append(got, e) })
				require.Len(t, got, n)
				for _, e := range got {
					take(e)
				}
				require.Empty(t, ref)
			}
		}
		require.Equal(t, len(ref), q.Len())
		require.Equal(t, len(ref) == 0, q.IsEmpty())
	}
	n := q.Drain(func(e *node) { take(e) })
	require.Empty(t, ref)
	require.Equal(t, 0, q.Len())
	_ = n
}

// TestModelMatchesReference runs random operation sequences against every
// variant.
func TestModelMatchesReference(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 50
	}
	for name, mk := range variants() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(name))))
			for range runs {
				ops := make([]byte, 3*r.IntN(200))
				for i := range ops {
					ops[i] = byte(r.UintN(256))
				}
				runModel(t, mk(), fifo(name), ops)
			}
		})
	}
}

// FuzzQueue interprets the fuzzer's bytes as an operation sequence (see
// runModel) and checks the mutex queue, and a three-shard queue as a
// multiset, against the reference.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 3, 0, 0})
	f.Add([]byte{1, 9, 0, 1, 9, 0, 4, 69, 1, 4, 5, 0x90})
	f.Add([]byte{2, 7, 0, 6, 0, 0, 0, 0, 0, 1, 3, 0, 3, 0, 0, 7, 0, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		runModel(t, New[node](), true, ops)
		runModel(t, NewSharded[node](3), false, ops)
	})
}
