package globalq

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatchSizeEdges checks min(room, 64, max(4, n/workers), n) at its edges:
// n 0, 1, 3, 4, 5 and large; workers 1, 2, many, and below 1; room below and
// above the share.
func TestBatchSizeEdges(t *testing.T) {
	cases := []struct{ n, workers, room, want int }{
		{0, 1, 64, 0}, {0, 2, 64, 0}, {0, 1000, 64, 0},
		{1, 1, 64, 1}, {1, 2, 64, 1}, {1, 1000, 64, 1},
		{3, 1, 64, 3}, {3, 2, 64, 3}, {3, 1000, 64, 3},
		{4, 1, 64, 4}, {4, 2, 64, 4}, {4, 1000, 64, 4},
		{5, 1, 64, 5}, {5, 2, 64, 4}, {5, 1000, 64, 4},
		{8, 2, 64, 4}, {10, 2, 64, 5}, {100, 2, 64, 50}, {128, 2, 64, 64},
		{1000, 1, 64, 64}, {1000, 2, 64, 64}, {1000, 100, 64, 10}, {1000, 1000, 64, 4},
		{1000, 1, 1000, 64},             // never above MaxBatch
		{1000, 2, 10, 10}, {5, 1, 2, 2}, // never above the room
		{1000, 2, 0, 0}, {1000, 2, -1, 0},
		{5, 0, 64, 5}, {5, -3, 64, 5}, // workers below 1 counts as 1
		{-1, 1, 64, 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, batchSize(c.n, c.workers, c.room), "batchSize(%d, %d, %d)", c.n, c.workers, c.room)
		assert.Equal(t, max(c.want, 0), refBatch(max(c.n, 0), c.workers, max(c.room, 0)), "refBatch(%d, %d, %d)", c.n, c.workers, c.room)
	}
}

// TestPopBatchTakesFairShareFIFO fills real queues to each edge length and
// checks the count and the order PopBatch returns.
func TestPopBatchTakesFairShareFIFO(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 9, 130, 1000} {
		for _, workers := range []int{1, 2, 1000} {
			t.Run(fmt.Sprintf("len%d/workers%d", n, workers), func(t *testing.T) {
				q := New[node]()
				for i := range n {
					require.True(t, q.Push(&node{id: i}))
				}
				dst := make([]*node, 100)
				got := q.PopBatch(dst, workers)
				require.Equal(t, batchSize(n, workers, len(dst)), got)
				for i, e := range dst[:got] {
					require.Equal(t, i, e.id)
					require.Nil(t, e.next)
				}
				require.Equal(t, n-got, q.Len())
			})
		}
	}
}
