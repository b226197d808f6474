package channels_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/channels"
)

// Many senders, one receiver: Send never waits.
func ExampleUnbounded() {
	u := channels.NewUnbounded[int]()
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				_ = u.Send(1)
			}
		}()
	}
	go func() { wg.Wait(); u.Close() }()

	sum := 0
	for {
		v, err := u.RecvBlocking(context.Background())
		if err != nil {
			fmt.Println(err)
			break
		}
		sum += v
	}
	fmt.Println("sum", sum)
	// Output:
	// channels: closed
	// sum 400
}
