// Command channels uses the channels alone, from ordinary goroutines: a producer and a consumer on a
// bounded channel, with a context for each blocking call.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/blitz-go/blitz/channels"
)

func main() {
	ctx := context.Background()
	c := channels.NewBounded[int](4)
	go func() {
		for i := 1; i <= 100; i++ {
			if err := c.SendBlocking(ctx, i); err != nil {
				panic(err)
			}
		}
		c.Close()
	}()
	sum := 0
	for {
		v, err := c.RecvBlocking(ctx)
		if errors.Is(err, channels.ErrClosed) {
			break
		}
		if err != nil {
			panic(err)
		}
		sum += v
	}
	if sum != 5050 {
		fmt.Println("unexpected: sum", sum)
		os.Exit(1)
	}
	fmt.Printf("ok: channels (received 1..100, sum %d)\n", sum)
}
