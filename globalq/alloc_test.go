package globalq

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPushPopDoNotAllocate: with intrusive links, a push and a pop, single or
// batched, allocate nothing, in both variants.
func TestPushPopDoNotAllocate(t *testing.T) {
	for name, mk := range variants() {
		t.Run(name, func(t *testing.T) {
			q := mk()
			e := &node{}
			es := make([]*node, 8)
			for i := range es {
				es[i] = &node{id: i}
			}
			dst := make([]*node, 8)
			single := testing.AllocsPerRun(1000, func() {
				q.Push(e)
				if q.Pop() != e {
					panic("lost")
				}
			})
			require.Zero(t, single, "allocs per Push+Pop")
			batch := testing.AllocsPerRun(1000, func() {
				q.PushSlice(es)
				q.PushOverflow(es[:0])
				for got := 0; got < len(es); {
					got += q.PopBatch(dst, 1)
				}
			})
			require.Zero(t, batch, "allocs per PushSlice+PopBatch")
		})
	}
}
