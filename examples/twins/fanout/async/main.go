// Command fanout fetches the values of keys from the kv server
// (examples/twins/kv) concurrently, at most -limit at a time; the first
// failure (a key not found) cancels the rest. Written as async functions on
// the blitz runtime (fanout_async.go is generated: go generate);
// ../goroutines is the same program with goroutines.
//
//	go run ./examples/twins/fanout/async -server 127.0.0.1:7070 a b c
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

func main() {
	server := flag.String("server", "127.0.0.1:7070", "address of the kv server")
	limit := flag.Int("limit", 4, "fetches at a time")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	vs, err := blitz.RunFallible(ctx, fetchAll(flag.Args(), *limit, func(key string) future.Future[future.Result[string]] {
		return fetchKeyAsync(*server, key)
	}))
	if err != nil {
		log.Fatal(err)
	}
	for i, v := range vs {
		fmt.Printf("%s = %s\n", flag.Arg(i), v)
	}
}
