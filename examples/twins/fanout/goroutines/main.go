// Command fanout fetches the values of keys from the kv server
// (examples/twins/kv) concurrently, at most -limit at a time; the first
// failure (a key not found) cancels the rest. Written with goroutines;
// ../async is the same program on the blitz runtime.
//
//	go run ./examples/twins/fanout/goroutines -server 127.0.0.1:7070 a b c
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
)

func main() {
	server := flag.String("server", "127.0.0.1:7070", "address of the kv server")
	limit := flag.Int("limit", 4, "fetches at a time")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	values, err := fetchAll(ctx, flag.Args(), *limit, func(ctx context.Context, key string) (string, error) {
		return fetchKey(ctx, *server, key)
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, v := range values {
		fmt.Printf("%s = %s\n", flag.Arg(i), v)
	}
}
