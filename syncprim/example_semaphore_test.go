package syncprim_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// A semaphore bounds how many workers run at once; a goroutine uses the
// blocking tier, and a future is driven here with future.Block.
func ExampleSemaphore() {
	sem := syncprim.NewSemaphore(2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	running, most := 0, 0
	for range 6 {
		wg.Go(func() {
			if err := sem.AcquireBlocking(context.Background(), 1); err != nil {
				return
			}
			defer sem.Release(1)
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			mu.Lock()
			running--
			mu.Unlock()
		})
	}
	wg.Wait()
	fmt.Println("at most", most <= 2, "available", sem.Available())

	f := sem.Acquire(2)
	err, _ := future.Block(context.Background(), f)
	fmt.Println("acquired 2:", err, "available", sem.Available())
	sem.Release(2)

	sem.Close()
	fmt.Println("after close:", sem.TryAcquire(1), sem.AcquireBlocking(context.Background(), 1))
	// Output:
	// at most true available 2
	// acquired 2: <nil> available 0
	// after close: false syncprim: closed
}

// Permits held as a Permit are returned once: releasing them again, through
// the Permit or a copy of it, panics with ErrGuardReleased instead of adding
// permits the holder no longer has.
func ExamplePermit() {
	sem := syncprim.NewSemaphore(3)
	p, err := sem.AcquirePermitBlocking(context.Background(), 2)
	fmt.Println("holding", p.N(), err, "available", sem.Available())
	p.Release()
	fmt.Println("released: available", sem.Available())
	func() {
		defer func() { fmt.Println("released again:", recover()) }()
		p.Release()
	}()
	fmt.Println("available", sem.Available())
	// Output:
	// holding 2 <nil> available 1
	// released: available 3
	// released again: syncprim: guard already released
	// available 3
}
