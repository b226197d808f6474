// Command hello is the README's program without the generator: a runtime, one task spawned
// from an ordinary goroutine and waited for, three sleeping futures run
// concurrently with future.JoinAll and collected in order, and a timeout
// around a future that takes too long. It spawns one task; the rest runs on
// the calling goroutine through BlockOn.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// greet is a task built from combinators: sleep, then produce a greeting.
func greet(name string, d time.Duration) future.Future[string] {
	return future.Map(blitz.Sleep(d), func(struct{}) string {
		return "hello, " + name
	})
}

func main() {
	rt, err := blitz.New(blitz.Config{}) // one worker per CPU
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())

	// Spawn from an ordinary goroutine and wait for the result.
	h := blitz.SpawnOn(rt.Handle(), greet("world", 10*time.Millisecond))
	msg, err := h.Wait(context.Background())
	fmt.Println(msg, err)

	// Run three greetings concurrently and collect them in order.
	all, err := blitz.BlockOn(context.Background(), rt.Handle(), future.JoinAll(
		greet("Ada", 30*time.Millisecond),
		greet("Grace", 10*time.Millisecond),
		greet("Barbara", 20*time.Millisecond),
	))
	fmt.Println(all, err)

	// A timeout around anything: this greeting takes too long.
	r, err := blitz.BlockOn(context.Background(), rt.Handle(),
		blitz.Timeout(5*time.Millisecond, greet("slowpoke", time.Second)))
	fmt.Println(errors.Is(r.Err, blitz.ErrTimeout), err)

	fmt.Printf("tasks spawned: %d, polls: %d\n", rt.Stats().Spawned, rt.Stats().Polled)
}
