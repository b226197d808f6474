// Command retry fetches a key from the kv server (examples/twins/kv),
// retrying with exponential backoff and jitter while the server is down
// or the key is missing. Written as async functions on the blitz runtime
// (retry_async.go is generated: go generate); ../goroutines is the same
// program with goroutines.
//
//	go run ./examples/twins/retry/async -server 127.0.0.1:7070 key
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

func main() {
	server := flag.String("server", "127.0.0.1:7070", "address of the kv server")
	attempts := flag.Int("attempts", 6, "attempts at most")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p := policy{attempts: *attempts, base: 100 * time.Millisecond, max: 5 * time.Second, timeout: 2 * time.Second}
	v, err := blitz.RunFallible(ctx, retryAsync(p, func() future.Future[future.Result[string]] {
		return fetchKeyAsync(*server, flag.Arg(0))
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)
}
