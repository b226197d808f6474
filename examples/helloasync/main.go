// Command helloasync is the README's first program: greetings written as
// async functions, which the blitzgen generator
// compiles into futures (main_async.go).
package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// greet sleeps, then greets. It is an async function: blitzgen writes
// greetAsync(name, d) beside it, which returns it as a future.
//
//blitz:async
func greet(name string, d time.Duration) string {
	future.Await(blitz.Sleep(d)) // waits without blocking a thread
	return "hello, " + name
}

type guest struct {
	name  string
	delay time.Duration
}

// greetAll greets the guests in turn, giving each greeting up to limit.
//
//blitz:async
func greetAll(guests []guest, limit time.Duration) []string {
	var out []string
	for _, g := range guests {
		r := future.Await(blitz.Timeout(limit, greetAsync(g.name, g.delay)))
		if r.Err != nil { // blitz.ErrTimeout
			out = append(out, g.name+" timed out")
			continue
		}
		out = append(out, r.Value)
	}
	return out
}

func main() {
	rt, err := blitz.New(blitz.Config{}) // one worker per CPU
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())

	// Spawn an async function as a task and wait for it from this goroutine.
	h := blitz.SpawnOn(rt.Handle(), greetAsync("world", 10*time.Millisecond))
	msg, err := h.Wait(context.Background())
	fmt.Println(msg, err)

	// Or run one on this goroutine until it completes.
	all, err := blitz.BlockOn(context.Background(), rt.Handle(), greetAllAsync([]guest{
		{"Ada", 10 * time.Millisecond}, {"Grace", 20 * time.Millisecond}, {"slowpoke", time.Hour},
	}, 500*time.Millisecond))
	fmt.Println(all, err)
}
