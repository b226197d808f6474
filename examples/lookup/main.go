// Command lookup is a key-value lookup server on the blitz runtime, written
// in the async style. A client sends a key per line; the server looks it up,
// bounded by a timeout, and answers with a line: the value, "ERR not found"
// or "ERR timeout". The lookup stands for a call to a slow backend: each
// takes its entry's delay, and the key "sloth" takes a second, more than the
// 100 ms the server allows.
//
// The connection handler and the lookup are async functions (handle and
// lookup, marked //blitz:async): they wait with future.Await and future.Try
// as if they blocked, and blitzgen compiles each into a state machine
// (handleAsync and lookupAsync, in main_async.go). blitz.TryTimeout bounds
// a lookup, and blitz.Serve runs the accept loop, one handler task per
// connection. Run go generate after editing them; in a module of your own,
// add the generator as a tool and write the go:generate line as
//
//	go get -tool github.com/blitz-go/blitz/asyncgen/cmd/blitzgen
//	//go:generate go tool blitzgen
//
// The same server is in variants/plain (goroutine per connection, package
// net) and variants/handwritten (the state machines written by hand), to
// compare what each takes to write.
//
// It stops gracefully on interrupt (Ctrl-C) or SIGTERM: the listener
// closes, the connections in progress get a grace period, then those left
// are cut.
//
//	go run ./examples/lookup            # serve on 127.0.0.1:7008
//	nc 127.0.0.1 7008                   # type ada, grace, sloth, ...
package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/lookup/internal/kv"
	"github.com/blitz-go/blitz/future"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7008", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := kv.Config{Addr: *addr, DB: kv.Sample(2*time.Millisecond, time.Second), Timeout: 100 * time.Millisecond, Grace: 2 * time.Second}
	if err := serve(ctx, cfg, os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// lookup returns the value of key, after the entry's delay.
//
//blitz:async
func lookup(db kv.DB, key string) (string, error) {
	e, ok := db[key]
	if !ok {
		return "", kv.ErrNotFound
	}
	future.Await(blitz.Sleep(e.Delay))
	return e.Value, nil
}

// handle serves one connection: read a key, look it up within timeout,
// write the reply, until the client closes. Its deferred Close runs when it
// returns and also when it is cancelled (the grace period ran out).
//
//blitz:async
func handle(s *blitz.TCPStream, db kv.DB, timeout time.Duration) error {
	defer s.Close()
	r := blitz.NewBufReader(s, 0)
	for {
		key, err := future.Try(r.ReadLine())
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := future.Try(blitz.TryTimeout(timeout, lookupAsync(db, key)))
		if _, err := future.Try(s.WriteAll([]byte(kv.Reply(v, err)))); err != nil {
			return err
		}
	}
}

// serve runs the server until ctx ends; ready, if not nil, receives the
// listener's address once it listens.
func serve(ctx context.Context, cfg kv.Config, out io.Writer, ready chan<- string) error {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), cfg.Addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "lookup: listening on %s (backend %s)\n", l.Addr(), rt.Backend())
	if ready != nil {
		ready <- l.AddrPort().String()
	}
	server := blitz.SpawnOn(rt.Handle(), blitz.Serve(l,
		func(s *blitz.TCPStream) future.Future[error] { return handleAsync(s, cfg.DB, cfg.Timeout) },
		blitz.ServeConfig{Grace: cfg.Grace}))
	<-ctx.Done()
	_ = l.Close() // Serve stops accepting, waits up to cfg.Grace, then cancels the rest
	stats, err := server.Wait(context.Background())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "lookup: served %d connections, %d cut after the grace period\n", stats.Accepted, stats.Cancelled)
	return stats.Err // Accept's error, if one stopped the server
}
