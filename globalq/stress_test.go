package globalq

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExactlyOnceUnderContention has producers pushing (singly and in
// slices) and consumers popping (singly and in batches) concurrently, with a
// watcher loading Len throughout: every element comes out exactly once, with
// its link cleared; Len is never negative and ends at 0.
func TestExactlyOnceUnderContention(t *testing.T) {
	const producers, consumers = 4, 4
	total := 1_000_000
	if testing.Short() {
		total = 40_000
	}
	for name, mk := range variants() {
		t.Run(name, func(t *testing.T) {
			q := mk()
			nodes := make([]node, total)
			seen := make([]atomic.Uint32, total)
			var popped, dupes, linked atomic.Int64
			var negative atomic.Bool
			done := make(chan struct{})

			var watcher sync.WaitGroup
			watcher.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					if q.Len() < 0 {
						negative.Store(true)
					}
					runtime.Gosched()
				}
			})

			var wg sync.WaitGroup
			per := total / producers
			for p := range producers {
				lo, hi := p*per, (p+1)*per
				if p == producers-1 {
					hi = total
				}
				wg.Go(func() {
					batch := make([]*node, 0, 16)
					for i := lo; i < hi; {
						if i%3 == 0 { // a slice of 1..16
							k := min(1+i%16, hi-i)
							batch = batch[:0]
							for j := range k {
								nodes[i+j].id = i + j
								batch = append(batch, &nodes[i+j])
							}
							if i%2 == 0 {
								q.PushSlice(batch)
							} else {
								q.PushOverflow(batch)
							}
							i += k
							continue
						}
						nodes[i].id = i
						q.Push(&nodes[i])
						i++
					}
				})
			}
			record := func(e *node) {
				if e.next != nil {
					linked.Add(1)
				}
				if seen[e.id].Add(1) != 1 {
					dupes.Add(1)
				}
				popped.Add(1)
			}
			for c := range consumers {
				wg.Go(func() {
					dst := make([]*node, 32)
					for popped.Load() < int64(total) {
						if c%2 == 0 {
							if e := q.Pop(); e != nil {
								record(e)
								continue
							}
						} else if n := q.PopBatch(dst, consumers); n > 0 {
							for _, e := range dst[:n] {
								record(e)
							}
							continue
						}
						runtime.Gosched()
					}
				})
			}
			wg.Wait()
			close(done)
			watcher.Wait()

			require.Equal(t, int64(total), popped.Load())
			require.Zero(t, dupes.Load(), "elements popped twice")
			require.Zero(t, linked.Load(), "elements popped with their link set")
			require.False(t, negative.Load(), "Len was negative")
			require.Equal(t, 0, q.Len())
			require.True(t, q.IsEmpty())
			for i := range seen {
				if seen[i].Load() != 1 {
					require.FailNow(t, "element lost or duplicated", "id %d seen %d times", i, seen[i].Load())
				}
			}
		})
	}
}

// TestCloseRacesPushLosesNothing closes the queue while producers push: every
// push that reported true is drained after Close, every one that reported
// false left its element unlinked.
func TestCloseRacesPushLosesNothing(t *testing.T) {
	for name, mk := range variants() {
		t.Run(name, func(t *testing.T) {
			q := mk()
			const producers, per = 4, 2000
			nodes := make([]node, producers*per)
			var accepted atomic.Int64
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := p * per; i < (p+1)*per; i++ {
						nodes[i].id = i
						if q.Push(&nodes[i]) {
							accepted.Add(1)
						}
					}
				})
			}
			runtime.Gosched()
			q.Close()
			wg.Wait()
			n := q.Drain(func(*node) {})
			require.Equal(t, accepted.Load(), int64(n))
			for i := range nodes {
				require.Nil(t, nodes[i].next)
			}
		})
	}
}
