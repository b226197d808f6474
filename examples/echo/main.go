// Command echo is a TCP echo server on the blitz runtime. Each connection is
// handled by echo, an async function: it reads and writes as if it blocked,
// waiting with future.Try, and the blitzgen generator compiles it into a
// state machine (echoAsync, in main_async.go), so a connection waiting for
// data costs a parked future of a few hundred bytes and no goroutine. The
// accept loop is blitz.Serve, which runs one handler task per connection.
// examples/echomachine is the same server with its state machines written by
// hand, for those who want to see the mechanism.
//
// After editing an async function, run go generate. In this repository
// the generator runs from the workspace (go run); in a module of your own,
// add it as a tool and write the go:generate line as
//
//	go get -tool github.com/blitz-go/blitz/asyncgen/cmd/blitzgen
//	//go:generate go tool blitzgen
//
// It stops gracefully on interrupt (Ctrl-C) or SIGTERM: the listener
// closes, the connections in progress get a grace period to finish, then
// those left are cancelled (their sockets closed) and the runtime shuts
// down.
//
//	go run ./examples/echo                      # serve on 127.0.0.1:7007
//	go run ./examples/echo -addr :9000 -grace 5s
//	nc 127.0.0.1 7007                           # type lines, get them back
//
// With -debug it also serves, on a plain net/http server of its own, what
// the runtime is doing: the live console for a browser, the task dump and
// the metrics for curl and Prometheus, and Go's own pprof; polls are then
// timed (Config.PollTiming). The connection tasks are named "echo
// connection", the accept loop "accept loop".
//
//	go run ./examples/echo -debug 127.0.0.1:7008
//	open http://127.0.0.1:7008/console/           # workers, tasks, I/O, live
//	curl http://127.0.0.1:7008/debug/tasks        # the task dump (?debug=2: one per task)
//	curl http://127.0.0.1:7008/metrics            # Prometheus text format
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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7007", "address to listen on")
	grace := flag.Duration("grace", 2*time.Second, "how long connections may finish after a stop")
	flag.StringVar(&debugAddr, "debug", "", "address for the console, task dump, metrics and pprof (off when empty)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr, *grace, os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// echo echoes one connection until the peer closes it, adding the bytes it
// writes back to echoed as it goes. Its deferred Close runs when it returns
// and also when it is cancelled (the grace period ran out).
//
// It reads with ReadPooled, the way a server reads: the read holds no
// buffer while it waits, and the data arrives in a buffer of the runtime's
// pool, given back with Release once written. A connection waiting for its
// peer then costs its task and its socket, not a buffer of its own.
//
//blitz:async
func echo(s *blitz.TCPStream, echoed *atomic.Int64) error {
	defer s.Close()
	_ = s.SetNoDelay(true)
	for {
		data, err := future.Try(s.ReadPooled())
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		n, err := future.Try(s.WriteAll(data.Bytes()))
		data.Release()
		echoed.Add(int64(n))
		if err != nil {
			return err
		}
	}
}

// serve runs the server until ctx ends; ready, if not nil, receives the
// listener's address once it listens.
func serve(ctx context.Context, addr string, grace time.Duration, out io.Writer, ready chan<- string) error {
	// With the debug endpoint on, polls are timed too, for the console's
	// poll times, histogram and slow polls (two clock reads per poll), and
	// spawns record their site (a runtime.Callers per spawn).
	rt, err := blitz.New(blitz.Config{PollTiming: debugAddr != "", SpawnSites: debugAddr != ""})
	if err != nil {
		return err
	}
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		_ = rt.Shutdown(context.Background())
		return err
	}
	fmt.Fprintf(out, "echo: listening on %s (backend %s)\n", l.Addr(), rt.Backend())
	stopDebug, err := serveDebug(rt, out)
	if err != nil {
		_ = l.Close()
		_ = rt.Shutdown(context.Background())
		return err
	}
	defer stopDebug()
	if ready != nil {
		ready <- l.AddrPort().String()
	}
	var echoed atomic.Int64 // every byte written back, by every connection
	server := blitz.SpawnOn(rt.Handle(), blitz.Named("accept loop", blitz.Serve(l,
		func(s *blitz.TCPStream) future.Future[error] {
			return blitz.Named("echo connection", echoAsync(s, &echoed))
		},
		blitz.ServeConfig{Grace: grace})))

	<-ctx.Done()
	fmt.Fprintln(out, "echo: stopping: no new connections")
	_ = l.Close() // Serve stops accepting and waits up to grace
	stats, err := server.Wait(context.Background())
	if err != nil {
		return err
	}
	if err := rt.Shutdown(context.Background()); err != nil {
		return err
	}
	fmt.Fprintf(out, "echo: served %d connections (%d finished in the grace period), echoed %d bytes\n", stats.Accepted, stats.Completed, echoed.Load())
	return nil
}
