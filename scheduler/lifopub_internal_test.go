package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLIFOPubFollowsTheLIFO drives a LIFO's moves as a worker makes them
// (a spawn or a wake pushed, evicting the oldest entry when full; a pop; a
// flush), with lifoPub following them as the worker does, against a model
// that holds, per entry, the id of a spawned task and 0 for a woken one:
// after every move, each entry reads as the model says (the ids, parents
// and side records of the spawned tasks, 0 everywhere else, where no side
// record is kept either).
func TestLIFOPubFollowsTheLIFO(t *testing.T) {
	moves := 20_000
	if testing.Short() {
		moves = 4_000
	}
	for _, capacity := range []int{LIFOSlot, LIFOStack} {
		t.Run(fmt.Sprintf("cap=%d", capacity), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(capacity), 7))
			var p lifoPub
			var model []*taskBase // nil for a woken task
			nextID := uint64(0)
			named := &taskExt{name: "named"}
			for move := range moves {
				switch k := rng.IntN(10); {
				case k < 6: // a push: a spawn (published) or a wake
					if len(model) == capacity {
						p.shiftDown(capacity)
						model = model[1:]
					}
					var tb *taskBase
					if rng.IntN(3) > 0 {
						nextID++
						tb = &taskBase{id: nextID, parent: nextID / 2}
						if rng.IntN(4) == 0 {
							tb.ext.Store(named)
						}
						p.publish(len(model), tb)
					}
					model = append(model, tb)
				case k < 9: // a pop
					if len(model) > 0 {
						model = model[:len(model)-1]
						p.clear(len(model))
					}
				default: // a flush
					p.clearAll(len(model))
					model = model[:0]
				}
				for i := range LIFOStack {
					id, parent, x := p.read(i)
					if i >= len(model) || model[i] == nil {
						require.Zero(t, id, "move %d, entry %d: %v", move, i, model)
						require.Nil(t, p.exts[i].Load(), "move %d, entry %d keeps a side record", move, i)
						continue
					}
					tb := model[i]
					require.Equal(t, tb.id, id, "move %d, entry %d", move, i)
					require.Equal(t, tb.parent, parent, "move %d, entry %d", move, i)
					require.Equal(t, tb.ext.Load(), x, "move %d, entry %d", move, i)
				}
			}
		})
	}
}
