// Command chat is a chat server: every line a client sends goes to all the
// other clients, as "<client number>: <line>". Written as async functions
// on the blitz runtime (chat_async.go is generated: go generate);
// ../goroutines is the same server with goroutines.
//
//	go run ./examples/twins/chat/async
//	nc 127.0.0.1 7072    # in two terminals
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/blitz-go/blitz"
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
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		return err
	}
	log.Printf("chat: listening on %s", l.Addr())
	stats, err := blitz.BlockOn(context.Background(), rt.Handle(), newServer().serve(ctx, l))
	if err != nil {
		return err
	}
	return stats.Err
}
