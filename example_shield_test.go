package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// A section that must finish once started: the cancel arrives while the
// task commits, and takes effect when the commit is done.
func ExampleShield() {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())

	started := make(chan struct{})
	commit := future.Map(blitz.Sleep(20*time.Millisecond), func(struct{}) string { return "committed" })
	h := blitz.SpawnOn(rt.Handle(), future.Future[string](blitz.Shield(future.PollFn(func(cx *future.Context) (string, bool) {
		select {
		case <-started:
		default:
			close(started)
		}
		return commit.Poll(cx)
	}))))
	<-started
	h.Cancel() // deferred: the shield is in force
	v, err := h.Wait(context.Background())
	fmt.Printf("%q, cancelled: %v\n", v, errors.Is(err, blitz.ErrCancelled))
	// Output: "committed", cancelled: false
}
