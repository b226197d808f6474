package channels_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// A bounded channel used from goroutines with the blocking tier, and from
// a future driven by future.Block.
func ExampleBounded() {
	c := channels.NewBounded[string](2)
	ctx := context.Background()

	_ = c.SendBlocking(ctx, "a")
	f := c.Send("b") // the future tier: a task would embed f in its state
	err, _ := future.Block(ctx, f)
	fmt.Println("sent b:", err == nil)
	c.Close()

	err = c.SendBlocking(ctx, "c")
	var se *channels.SendError[string]
	if errors.As(err, &se) {
		fmt.Println("returned:", se.Value, errors.Is(err, channels.ErrClosed))
	}
	for {
		v, err := c.RecvBlocking(ctx)
		if errors.Is(err, channels.ErrClosed) {
			fmt.Println("closed and drained")
			break
		}
		fmt.Println("got", v)
	}
	// Output:
	// sent b: true
	// returned: c true
	// got a
	// got b
	// closed and drained
}

// The non-blocking tier.
func ExampleBounded_TrySend() {
	c := channels.NewBounded[int](1)
	fmt.Println(c.TrySend(1))
	fmt.Println(c.TrySend(2))
	v, err := c.TryRecv()
	fmt.Println(v, err)
	_, err = c.TryRecv()
	fmt.Println(err)
	// Output:
	// <nil>
	// channels: full
	// 1 <nil>
	// channels: empty
}
