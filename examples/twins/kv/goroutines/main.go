// Command kv is a key-value server with a line protocol (GET key, SET key
// value, DEL key) that closes connections idle for longer than -idle,
// written with a goroutine per connection. ../async is the same server on
// the blitz runtime.
//
//	go run ./examples/twins/kv/goroutines
//	nc 127.0.0.1 7070
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
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
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("kv: listening on %s", l.Addr())
	return newServer(idle).serve(ctx, l)
}
