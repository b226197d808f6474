package globalq

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCloseRejectsPushesKeepsElements: after Close, Push and PushSlice report
// false and leave their elements unlinked; PushOverflow still appends; the
// queued elements stay for Pop, PopBatch and Drain; Close is idempotent.
func TestCloseRejectsPushesKeepsElements(t *testing.T) {
	for name, mk := range variants() {
		t.Run(name, func(t *testing.T) {
			q := mk()
			require.False(t, q.Closed())
			require.True(t, q.PushSlice(nil), "empty PushSlice on an open queue")
			a, b, c := &node{id: 1}, &node{id: 2}, &node{id: 3}
			require.True(t, q.Push(a))
			require.True(t, q.PushSlice([]*node{b, c}))
			q.Close()
			q.Close()
			require.True(t, q.Closed())

			x, y := &node{id: 4}, &node{id: 5}
			require.False(t, q.Push(x))
			require.Nil(t, x.next)
			require.False(t, q.PushSlice([]*node{x, y}))
			require.Nil(t, x.next)
			require.Nil(t, y.next)
			require.False(t, q.PushSlice(nil), "empty PushSlice on a closed queue")
			require.Equal(t, 3, q.Len())

			q.PushOverflow([]*node{x})
			require.Equal(t, 4, q.Len())

			first := q.Pop()
			require.NotNil(t, first)
			var rest []int
			n := q.Drain(func(e *node) {
				require.Nil(t, e.next)
				rest = append(rest, e.id)
			})
			require.Equal(t, 3, n)
			if fifo(name) {
				require.Same(t, a, first)
				require.Equal(t, []int{2, 3, 4}, rest)
			}
			require.True(t, q.IsEmpty())
			require.Nil(t, q.Pop())
			require.Zero(t, q.PopBatch(make([]*node, 4), 1))
		})
	}
}

// TestMisusePanics: what the queue can detect cheaply panics with the package
// prefix and leaves the queue and the caller's elements as they were.
func TestMisusePanics(t *testing.T) {
	for name, mk := range variants() {
		t.Run(name, func(t *testing.T) {
			q := mk()
			require.PanicsWithValue(t, msgNilPush, func() { q.Push(nil) })

			a, b, c := &node{id: 1}, &node{id: 2}, &node{id: 3}
			require.True(t, q.PushSlice([]*node{a, b})) // one shard in every variant
			// a is queued and not the tail: its link is set.
			require.PanicsWithValue(t, msgLinkedPush, func() { q.Push(a) })
			require.PanicsWithValue(t, msgLinkedPush, func() { q.PushSlice([]*node{c, a}) })
			require.Nil(t, c.next, "links restored after a panicking PushSlice")
			// Duplicates within one slice.
			require.PanicsWithValue(t, msgLinkedPush, func() { q.PushSlice([]*node{c, c}) })
			require.Nil(t, c.next)
			d := &node{id: 4}
			require.PanicsWithValue(t, msgLinkedPush, func() { q.PushOverflow([]*node{c, d, c}) })
			require.Nil(t, c.next)
			require.Nil(t, d.next)
			require.PanicsWithValue(t, msgNilPush, func() { q.PushSlice([]*node{c, nil}) })
			require.Nil(t, c.next)
			require.Equal(t, 2, q.Len())

			if name == "queue" || name == "zero" || name == "sharded1" {
				// b is the tail: its link is nil, but the queue compares. A
				// sharded queue compares only with the tail of the shard
				// the push lands on.
				require.PanicsWithValue(t, msgTailPush, func() { q.Push(b) })
				require.PanicsWithValue(t, msgTailPush, func() { q.PushSlice([]*node{c, b}) })
				require.Nil(t, c.next)
				require.PanicsWithValue(t, msgTailPush, func() { q.PushOverflow([]*node{b, c}) })
				require.Nil(t, c.next)
			}
			require.Equal(t, 2, q.Len())
			require.Equal(t, 2, q.Drain(func(*node) {}))
		})
	}
	require.PanicsWithValue(t, msgShards, func() { NewSharded[node](-1) })
}
