// Command retry fetches a key from the kv server (examples/twins/kv),
// retrying with exponential backoff and jitter while the server is down
// or the key is missing. Written with goroutines; ../async is the same
// program on the blitz runtime.
//
//	go run ./examples/twins/retry/goroutines -server 127.0.0.1:7070 key
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"
)

func main() {
	server := flag.String("server", "127.0.0.1:7070", "address of the kv server")
	attempts := flag.Int("attempts", 6, "attempts at most")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p := policy{attempts: *attempts, base: 100 * time.Millisecond, max: 5 * time.Second, timeout: 2 * time.Second}
	v, err := retry(ctx, p, func(ctx context.Context) (string, error) {
		return fetchKey(ctx, *server, flag.Arg(0))
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)
}
