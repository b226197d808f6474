package channels_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// A oneshot carries one reply: the requester keeps the receiver and hands
// the sender to whoever answers.
func ExampleNewOneshot() {
	tx, rx := channels.NewOneshot[int]()
	go func() { _ = tx.Send(42) }()

	f := rx.Recv() // the future tier: a task would embed f in its state
	res, err := future.Block(context.Background(), f)
	fmt.Println(res.Value, res.Err, err)

	fmt.Println(errors.Is(tx.Send(7), channels.ErrAlreadySent))
	_, err = rx.TryRecv()
	fmt.Println(err)

	// A receiver that loses interest: the sender keeps its value.
	tx2, rx2 := channels.NewOneshot[string]()
	rx2.Close()
	fmt.Println(tx2.IsClosed(), tx2.Send("late"))
	// Output:
	// 42 <nil> <nil>
	// true
	// channels: closed
	// true channels: closed
}
