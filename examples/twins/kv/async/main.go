// Command kv is a key-value server with a line protocol (GET key, SET key
// value, DEL key) that closes connections idle for longer than -idle,
// written as async functions on the blitz runtime (kv_async.go is
// generated: go generate). ../goroutines is the same server with a
// goroutine per connection.
//
//	go run ./examples/twins/kv/async
//	nc 127.0.0.1 7070
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blitz-go/blitz"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7070", "address to listen on")
	idle := flag.Duration("idle", time.Minute, "close connections idle for longer")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *idle); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string, idle time.Duration) error {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		return err
	}
	log.Printf("kv: listening on %s", l.Addr())
	stats, err := blitz.BlockOn(context.Background(), rt.Handle(), newServer(idle).serve(ctx, l))
	if err != nil {
		return err
	}
	return stats.Err
}
