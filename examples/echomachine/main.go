// Command echomachine is the TCP echo server of examples/echo with its tasks
// written by hand, for those who want to see the mechanism: the accept loop
// and every connection are small state machines over the runtime's I/O
// futures, each a struct holding what lives across a wait and a Poll that
// resumes where it stopped. examples/echo is the same server in the usual
// style, an async function that the blitzgen generator compiles into such a
// state machine; this is what that generated code amounts to. A connection
// waiting for data costs a parked future and no goroutine, and nothing
// busy-polls (the waits are the I/O backend's: io_uring, epoll, kqueue or
// IOCP).
//
// It stops gracefully on interrupt (Ctrl-C) or SIGTERM: the listener
// closes, the connections in progress get a grace period to finish, then
// the runtime shuts down and cancels whatever is left.
//
//	go run ./examples/echomachine               # serve on 127.0.0.1:7007
//	go run ./examples/echomachine -addr :9000 -grace 5s
//	nc 127.0.0.1 7007                           # type lines, get them back
package main

import (
	"context"
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
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr, *grace, os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// serve runs the server until ctx ends; ready, if not nil, receives the
// listener's address once it listens.
func serve(ctx context.Context, addr string, grace time.Duration, out io.Writer, ready chan<- string) error {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		return err
	}
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		_ = rt.Shutdown(context.Background())
		return err
	}
	fmt.Fprintf(out, "echo: listening on %s (backend %s)\n", l.Addr(), rt.Backend())
	if ready != nil {
		ready <- l.AddrPort().String()
	}
	// echoed counts every byte written back, by every connection, as it
	// goes: a connection cut by the shutdown has no result to report.
	var echoed atomic.Int64
	server := blitz.SpawnOn(rt.Handle(), future.Future[[]blitz.JoinHandle[int]](&acceptLoop{l: l, echoed: &echoed}))

	<-ctx.Done()
	fmt.Fprintln(out, "echo: stopping: no new connections")
	_ = l.Close() // the accept loop ends with ErrClosed
	conns, err := server.Wait(context.Background())
	if err != nil {
		return err
	}
	// Let the connections in progress finish, up to the grace period.
	graceCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	finished := 0
	for _, h := range conns {
		if _, err := h.Wait(graceCtx); err == nil {
			finished++
		}
	}
	// Shutdown cancels what is left: their reads fail, their sockets close.
	if err := rt.Shutdown(context.Background()); err != nil {
		return err
	}
	fmt.Fprintf(out, "echo: served %d connections (%d finished in the grace period), echoed %d bytes\n", len(conns), finished, echoed.Load())
	return nil
}

// acceptLoop accepts connections until the listener closes, spawning a
// conn task for each; it returns their JoinHandles.
type acceptLoop struct {
	l       *blitz.TCPListener
	echoed  *atomic.Int64 // shared by the conns
	acc     *blitz.AcceptFuture[*blitz.TCPStream]
	waiting bool
	conns   []blitz.JoinHandle[int]
}

func (a *acceptLoop) Poll(cx *future.Context) ([]blitz.JoinHandle[int], bool) {
	for {
		if !a.waiting {
			// The next accept: the first from the listener, the others
			// in the memory of the last (Rearm), so that an accept
			// allocates no future.
			if a.acc == nil || !a.acc.Rearm() {
				a.acc = a.l.Accept()
			}
			a.waiting = true
		}
		r, ok := a.acc.Poll(cx)
		if !ok {
			return nil, false
		}
		a.waiting = false
		if r.Err != nil { // the listener was closed
			return a.conns, true
		}
		_ = r.Value.SetNoDelay(true)
		a.conns = append(a.conns, blitz.Spawn(cx, future.Future[int](&conn{s: r.Value, total: a.echoed})))
	}
}

// conn echoes one connection: read, write everything back, until the peer
// closes; it returns the bytes it echoed and adds them to total as it goes.
// The futures it waits on live inside it, so a connection allocates once.
type conn struct {
	s       *blitz.TCPStream
	total   *atomic.Int64
	buf     [4096]byte
	writing bool
	rd      *blitz.ReadFuture
	wr      *blitz.WriteAllFuture
	started bool
	echoed  int
}

func (c *conn) Poll(cx *future.Context) (int, bool) {
	for {
		if !c.writing {
			if !c.started {
				c.rd = c.s.Read(c.buf[:])
				c.started = true
			}
			r, ok := c.rd.Poll(cx)
			if !ok {
				return 0, false
			}
			c.started = false
			if r.Err != nil { // io.EOF, or a reset
				_ = c.s.Close()
				return c.echoed, true
			}
			c.wr = c.s.WriteAll(c.buf[:r.Value])
			c.writing = true
		}
		r, ok := c.wr.Poll(cx)
		if !ok {
			return 0, false
		}
		c.echoed += r.Value
		c.total.Add(int64(r.Value))
		c.writing = false
		if r.Err != nil {
			_ = c.s.Close()
			return c.echoed, true
		}
	}
}

// Cancel is called when the runtime shuts down with the connection still
// open: its pending read is cancelled and the socket closed.
func (c *conn) Cancel() {
	if c.writing {
		c.wr.Cancel()
	} else if c.started {
		c.rd.Cancel()
	}
	_ = c.s.Close()
}
