package channels_test

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// Selecting over receives of several channels, of both kinds: the first
// ready wins and the others are cancelled without losing a message.
func Example_select() {
	jobs := channels.NewBounded[string](4)
	urgent := channels.NewUnbounded[string]()
	_ = jobs.TrySend("job 1")
	_ = urgent.Send("urgent 1")

	for i := 0; i < 2; i++ {
		// The futures live in the select's state; a task would embed them.
		u, j := urgent.Recv(), jobs.Recv()
		r, _ := future.Block(context.Background(), future.Select[future.Result[string]](u, j))
		fmt.Println(r.Index, r.Value.Value)
	}
	// Output:
	// 0 urgent 1
	// 1 job 1
}
