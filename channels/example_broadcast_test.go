package channels_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/blitz-go/blitz/channels"
)

// Every receiver sees every message; one that falls more than the capacity
// behind learns how many it missed.
func ExampleNewBroadcast() {
	b := channels.NewBroadcast[string](2)
	fast, slow := b.Subscribe(), b.Subscribe()
	ctx := context.Background()

	n, _ := b.Send("a")
	fmt.Println("receivers:", n)
	v, _ := fast.RecvBlocking(ctx)
	fmt.Println("fast got", v)
	_, _ = b.Send("b")
	_, _ = b.Send("c")

	_, err := slow.TryRecv() // "a" was overwritten
	var lag *channels.LaggedError
	if errors.As(err, &lag) {
		fmt.Println("slow missed", lag.Missed)
	}
	b.Close()
	for _, r := range []*channels.BroadcastReceiver[string]{fast, slow} {
		for {
			v, err := r.RecvBlocking(ctx)
			if err != nil {
				fmt.Println(err)
				break
			}
			fmt.Println("got", v)
		}
	}
	// Output:
	// receivers: 2
	// fast got a
	// slow missed 1
	// got b
	// got c
	// channels: closed
	// got b
	// got c
	// channels: closed
}
