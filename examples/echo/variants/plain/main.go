// Command plain is the echo server of examples/echo in plain Go, for
// comparison: a goroutine per connection on package net. It echoes, counts
// and stops the same way (the listener closes, connections get a grace
// period, those left are cut).
//
//	go run ./examples/echo/variants/plain
package main

import (
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
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7007", "address to listen on")
	grace := flag.Duration("grace", 2*time.Second, "how long connections may finish after a stop")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr, *grace, os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// echo echoes one connection until the peer closes it, adding the bytes it
// writes back to echoed as it goes.
func echo(c net.Conn, echoed *atomic.Int64) error {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		n, err = c.Write(buf[:n])
		echoed.Add(int64(n))
		if err != nil {
			return err
		}
	}
}

// serve runs the server until ctx ends; ready, if not nil, receives the
// listener's address once it listens.
func serve(ctx context.Context, addr string, grace time.Duration, out io.Writer, ready chan<- string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "echo: listening on %s\n", l.Addr())
	if ready != nil {
		ready <- l.Addr().String()
	}
	stopAccepting := context.AfterFunc(ctx, func() {
		fmt.Fprintln(out, "echo: stopping: no new connections")
		_ = l.Close()
	})
	defer stopAccepting()
	var (
		echoed   atomic.Int64 // every byte written back, by every connection
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
			_ = echo(c, &echoed)
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
	case <-time.After(grace):
		mu.Lock()
		for c := range open {
			_ = c.Close()
			cut++
		}
		mu.Unlock()
		<-finished
	}
	fmt.Fprintf(out, "echo: served %d connections (%d finished in the grace period), echoed %d bytes\n", accepted, accepted-cut, echoed.Load())
	return failed
}
