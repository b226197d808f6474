package syncprim_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// Three parties meet at a barrier twice: two goroutines on the blocking
// tier and one driving the future tier with future.Block. Each round has
// exactly one leader, and every party sees the same generation.
func ExampleBarrier() {
	b := syncprim.NewBarrier(3)
	var mu sync.Mutex
	leaders := map[uint64]int{}
	record := func(r syncprim.BarrierResult) {
		mu.Lock()
		defer mu.Unlock()
		if r.Leader {
			leaders[r.Generation]++
		}
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				r, err := b.WaitBlocking(context.Background())
				if err != nil {
					panic(err)
				}
				record(r)
			}
		}()
	}
	for range 2 {
		f := b.Wait()
		r, err := future.Block[syncprim.BarrierResult](context.Background(), f)
		if err != nil {
			panic(err)
		}
		record(r)
	}
	wg.Wait()
	fmt.Println("leaders of round 0:", leaders[0], "round 1:", leaders[1])
	// Output: leaders of round 0: 1 round 1: 1
}
