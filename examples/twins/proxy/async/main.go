// Command proxy is a TCP proxy: it forwards each connection to -upstream,
// copying both directions, and passes a half-close on (when one side stops
// sending, the other side's sending half is shut down). Written as async
// functions on the blitz runtime (proxy_async.go is generated: go
// generate); ../goroutines is the same proxy with goroutines.
//
//	go run ./examples/twins/proxy/async -upstream example.com:80
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
	addr := flag.String("addr", "127.0.0.1:7071", "address to listen on")
	upstream := flag.String("upstream", "127.0.0.1:7070", "address to forward to")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *upstream); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr, upstream string) error {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		return err
	}
	log.Printf("proxy: forwarding %s to %s", l.Addr(), upstream)
	srv := &server{upstream: upstream}
	stats, err := blitz.BlockOn(context.Background(), rt.Handle(), srv.serve(ctx, l))
	if err != nil {
		return err
	}
	return stats.Err
}
