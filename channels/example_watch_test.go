package channels_test

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// A watch holds the latest configuration; receivers wake on changes and
// read the newest value (intermediate ones may be skipped).
func ExampleNewWatch() {
	type config struct{ level int }
	w := channels.NewWatch(config{level: 1})
	r := w.Subscribe()
	ctx := context.Background()

	_ = w.Send(config{level: 2})
	_ = w.SendModify(func(c *config) { c.level++ })

	f := r.Changed() // the future tier: a task would embed f in its state
	err, _ := future.Block(ctx, f)
	fmt.Println("changed:", err, "level", r.BorrowAndUpdate().level)

	changed, err := r.HasChanged()
	fmt.Println("again:", changed, err)

	w.Close()
	fmt.Println(r.ChangedBlocking(ctx), "last:", r.Borrow().level)
	// Output:
	// changed: <nil> level 3
	// again: false <nil>
	// channels: closed last: 3
}
