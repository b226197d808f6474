// Command proxy is a TCP proxy: it forwards each connection to -upstream,
// copying both directions, and passes a half-close on (when one side stops
// sending, the other side's sending half is shut down). Written with
// goroutines; ../async is the same proxy on the blitz runtime.
//
//	go run ./examples/twins/proxy/goroutines -upstream example.com:80
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
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("proxy: forwarding %s to %s", l.Addr(), upstream)
	return newServer(upstream).serve(ctx, l.(*net.TCPListener))
}
