package syncprim_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// The zero Mutex is ready. Goroutines lock it with LockBlocking; a task
// polls the future of Lock (here driven by future.Block).
func ExampleMutex() {
	var mu syncprim.Mutex
	counter := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				g, err := mu.LockBlocking(context.Background())
				if err != nil {
					return
				}
				counter++
				g.Unlock()
			}
		})
	}
	wg.Wait()

	f := mu.Lock()
	g, _ := future.Block(context.Background(), f)
	counter++
	g.Unlock()

	if g, ok := mu.TryLock(); ok {
		fmt.Println("counter", counter)
		g.Unlock()
	}
	// Output: counter 4001
}
