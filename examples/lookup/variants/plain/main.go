// Command plain is the lookup server of examples/lookup in plain Go, for
// comparison: a goroutine per connection on package net, each lookup bounded
// by a context. It speaks the same protocol, serves the same data and stops
// the same way (the listener closes, connections get a grace period, those
// left are cut).
//
//	go run ./examples/lookup/variants/plain
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/blitz-go/blitz/examples/lookup/internal/kv"
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

// lookup returns the value of key, after the entry's delay, unless ctx ends
// first.
func lookup(ctx context.Context, db kv.DB, key string) (string, error) {
	e, ok := db[key]
	if !ok {
		return "", kv.ErrNotFound
	}
	t := time.NewTimer(e.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return e.Value, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// handle serves one connection: read a key, look it up within timeout,
// write the reply, until the client closes.
func handle(c net.Conn, db kv.DB, timeout time.Duration) error {
	defer c.Close()
	r := bufio.NewScanner(c)
	for r.Scan() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		v, err := lookup(ctx, db, r.Text())
		cancel()
		if _, err := io.WriteString(c, kv.Reply(v, err)); err != nil {
			return err
		}
	}
	return r.Err()
}

// serve runs the server until ctx ends; ready, if not nil, receives the
// listener's address once it listens.
func serve(ctx context.Context, cfg kv.Config, out io.Writer, ready chan<- string) error {
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "lookup: listening on %s\n", l.Addr())
	if ready != nil {
		ready <- l.Addr().String()
	}
	stopAccepting := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stopAccepting()
	var (
		mu       sync.Mutex
		open     = map[net.Conn]bool{} // the connections being served
		wg       sync.WaitGroup
		accepted int
		failed   error // Accept's error, other than a closed listener
	)
	for {
		c, err := l.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				failed = err
				_ = l.Close()
			}
			break
		}
		accepted++
		mu.Lock()
		open[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = handle(c, cfg.DB, cfg.Timeout)
			mu.Lock()
			delete(open, c)
			mu.Unlock()
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	cut := 0
	select {
	case <-finished:
	case <-time.After(cfg.Grace):
		mu.Lock()
		for c := range open {
			_ = c.Close()
			cut++
		}
		mu.Unlock()
		<-finished
	}
	fmt.Fprintf(out, "lookup: served %d connections, %d cut after the grace period\n", accepted, cut)
	return failed
}
