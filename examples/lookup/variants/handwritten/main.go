// Command handwritten is the lookup server of examples/lookup with its
// futures written by hand: the lookup and the connection handler are state
// machines, structs holding what lives across a wait with a Poll that
// resumes where it stopped and a Cancel that withdraws what is pending. It
// is what the generated code of examples/lookup amounts to, for comparison.
//
//	go run ./examples/lookup/variants/handwritten
package main

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

// lookupFuture returns the value of a key after the entry's delay. The
// sleep is embedded, so a lookup allocates once.
type lookupFuture struct {
	e     kv.Entry
	found bool
	sleep blitz.SleepFuture
}

func newLookup(db kv.DB, key string) *lookupFuture {
	f := &lookupFuture{}
	f.e, f.found = db[key]
	f.sleep.ResetAfter(f.e.Delay)
	return f
}

func (f *lookupFuture) Poll(cx *future.Context) (future.Result[string], bool) {
	if !f.found {
		return future.Fail[string](kv.ErrNotFound), true
	}
	if _, ok := f.sleep.Poll(cx); !ok {
		return future.Result[string]{}, false
	}
	return future.Ok(f.e.Value), true
}

// Cancel removes the sleep from the timers.
func (f *lookupFuture) Cancel() { f.sleep.Cancel() }

// conn serves one connection: read a key, look it up within timeout, write
// the reply, until the client closes. It is in one of three states, each
// with the future it waits on.
type conn struct {
	s       *blitz.TCPStream
	db      kv.DB
	timeout time.Duration
	r       *blitz.BufReader
	state   connState
	line    *blitz.StreamFuture[string]          // reading
	look    future.Future[future.Result[string]] // looking up
	write   *blitz.WriteAllFuture                // writing
}

type connState uint8

const (
	reading connState = iota
	lookingUp
	writing
)

func newConn(s *blitz.TCPStream, db kv.DB, timeout time.Duration) *conn {
	return &conn{s: s, db: db, timeout: timeout, r: blitz.NewBufReader(s, 0)}
}

func (c *conn) Poll(cx *future.Context) (error, bool) {
	for {
		switch c.state {
		case reading:
			if c.line == nil {
				c.line = c.r.ReadLine()
			}
			r, ok := c.line.Poll(cx)
			if !ok {
				return nil, false
			}
			c.line = nil
			if r.Err != nil {
				_ = c.s.Close()
				if errors.Is(r.Err, io.EOF) {
					return nil, true
				}
				return r.Err, true
			}
			c.look = blitz.TryTimeout(c.timeout, future.Future[future.Result[string]](newLookup(c.db, r.Value)))
			c.state = lookingUp
		case lookingUp:
			r, ok := c.look.Poll(cx)
			if !ok {
				return nil, false
			}
			c.look = nil
			c.write = c.s.WriteAll([]byte(kv.Reply(r.Value, r.Err)))
			c.state = writing
		case writing:
			r, ok := c.write.Poll(cx)
			if !ok {
				return nil, false
			}
			c.write = nil
			if r.Err != nil {
				_ = c.s.Close()
				return r.Err, true
			}
			c.state = reading
		}
	}
}

// Cancel withdraws what the connection waits on and closes it: Serve
// cancels the handlers left after the grace period.
func (c *conn) Cancel() {
	switch {
	case c.line != nil:
		future.Cancel(c.line)
	case c.look != nil:
		future.Cancel(c.look)
	case c.write != nil:
		future.Cancel(c.write)
	}
	_ = c.s.Close()
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
		func(s *blitz.TCPStream) future.Future[error] { return newConn(s, cfg.DB, cfg.Timeout) },
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
