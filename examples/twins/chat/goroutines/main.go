// Command chat is a chat server: every line a client sends goes to all the
// other clients, as "<client number>: <line>". Written with goroutines;
// ../async is the same server on the blitz runtime.
//
//	go run ./examples/twins/chat/goroutines
//	nc 127.0.0.1 7072    # in two terminals
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7072", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("chat: listening on %s", l.Addr())
	return newServer().serve(ctx, l)
}
