// Command asyncgen uses the blitzgen generator the way a user installs it:
//
//	go get -tool github.com/blitz-go/blitz/asyncgen/cmd/blitzgen
//	go generate
//
// It writes main_async.go beside this file, holding countAsync: the async
// function below compiled into a state-machine future, which main runs on
// a runtime.
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

//go:generate go tool blitzgen

// count sleeps n times and reports how many sleeps it made.
//
//blitz:async
func count(n int, d time.Duration) (int, error) {
	slept := 0
	for range n {
		future.Await(blitz.Sleep(d))
		slept++
	}
	if slept != n {
		return slept, fmt.Errorf("slept %d times of %d", slept, n)
	}
	return slept, nil
}

func main() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	r, err := blitz.BlockOn(context.Background(), rt.Handle(), countAsync(3, time.Millisecond))
	if err != nil || r.Err != nil {
		log.Fatal(err, r.Err)
	}
	fmt.Println("ok: asyncgen, slept", r.Value, "times")
}
