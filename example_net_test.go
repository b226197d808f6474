package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// greeter serves one connection: it reads a name and writes a greeting. A
// task written as a state machine: the futures it waits on are fields.
type greeter struct {
	s     *blitz.TCPStream
	buf   [64]byte
	step  int
	read  *blitz.ReadFuture
	write *blitz.WriteAllFuture
}

func (g *greeter) Poll(cx *future.Context) (error, bool) {
	for {
		switch g.step {
		case 0:
			g.read = g.s.Read(g.buf[:])
			g.step = 1
		case 1:
			r, ok := g.read.Poll(cx)
			if !ok {
				return nil, false // the read registered cx's Waker
			}
			if r.Err != nil {
				return r.Err, true
			}
			g.write = g.s.WriteAll(fmt.Appendf(nil, "hello, %s", g.buf[:r.Value]))
			g.step = 2
		case 2:
			r, ok := g.write.Poll(cx)
			if !ok {
				return nil, false
			}
			_ = g.s.Close()
			return r.Err, true
		}
	}
}

// Example_tcpServer accepts a connection on the runtime and serves it with a
// task; the client is ordinary Go code using package net.
func Example_tcpServer() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()

	printed := make(chan struct{})
	go func() { // the client
		defer close(printed)
		c, err := net.Dial("tcp", l.AddrPort().String())
		if err != nil {
			panic(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte("Ada"))
		reply, _ := io.ReadAll(c)
		fmt.Println(string(reply))
	}()

	// Accept from a goroutine with BlockOn, then serve as a task.
	acc := l.Accept()
	r, err := blitz.BlockOn(context.Background(), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](acc))
	if err != nil || r.Err != nil {
		panic(fmt.Sprint(err, r.Err))
	}
	h := blitz.SpawnOn(rt.Handle(), future.Future[error](&greeter{s: r.Value}))
	if err, _ := h.Wait(context.Background()); err != nil {
		panic(err)
	}
	<-printed
	// Output: hello, Ada
}

// Example_netListener hands a runtime listener to ordinary Go code:
// NetListener adapts it to net.Listener (http.Server.Serve takes it the
// same way; see examples/httpserver).
func Example_netListener() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ln := blitz.NetListener(l)
	defer ln.Close()
	go func() {
		c, err := ln.Accept() // a net.Conn over the runtime's I/O
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.WriteString(c, "served by blitz")
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	b, _ := io.ReadAll(c)
	fmt.Println(string(b))
	// Output: served by blitz
}

// counter counts the bytes of a connection until its end, reading with
// PollReadPooled: between reads it holds no buffer and no future of its
// own (the pooled read in flight is the stream's), only its count.
type counter struct {
	s *blitz.TCPStream
	n int
}

func (c *counter) Poll(cx *future.Context) (int, bool) {
	for {
		r, ok := c.s.PollReadPooled(cx)
		if !ok {
			return 0, false // the stream's read registered cx's Waker
		}
		if r.Err != nil { // io.EOF at the end of the stream
			return c.n, true
		}
		c.n += len(r.Value.Bytes())
		r.Value.Release() // the buffer goes back to the runtime's pool
	}
}

// Cancel abandons the read in flight: what it received goes to the
// stream's next read.
func (c *counter) Cancel() { c.s.CancelRead() }

// ExampleTCPStream_PollReadPooled counts what a client sends, reading into
// the runtime's pool of read buffers from a task's Poll.
func ExampleTCPStream_PollReadPooled() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()

	go func() { // the client sends 11 bytes and closes
		c, err := net.Dial("tcp", l.AddrPort().String())
		if err != nil {
			panic(err)
		}
		_, _ = c.Write([]byte("hello, "))
		_, _ = c.Write([]byte("pool"))
		_ = c.Close()
	}()

	r, err := blitz.BlockOn(context.Background(), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](l.Accept()))
	if err != nil || r.Err != nil {
		panic(fmt.Sprint(err, r.Err))
	}
	defer r.Value.Close()
	n, err := blitz.SpawnOn(rt.Handle(), future.Future[int](&counter{s: r.Value})).Wait(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(n, "bytes")
	// Output: 11 bytes
}

// echo writes back what its connection sends, as a protocol's connection
// is written: the pooled read, then PollWrite until the buffer is out,
// the progress kept in the buffer itself (Advance). Idle, it holds the
// stream and nothing else.
type echo struct {
	s   *blitz.TCPStream
	buf blitz.PooledBuf // the data being written back, none while reading
}

func (e *echo) Poll(cx *future.Context) (error, bool) {
	for {
		if data := e.buf.Bytes(); len(data) > 0 {
			r, ok := e.s.PollWrite(cx, data)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return e.end(r.Err)
			}
			if e.buf = e.buf.Advance(r.Value); len(e.buf.Bytes()) > 0 {
				continue // the socket took part of it
			}
			e.buf.Release()
			e.buf = blitz.PooledBuf{}
		}
		r, ok := e.s.PollReadPooled(cx)
		if !ok {
			return nil, false
		}
		if r.Err != nil {
			return e.end(r.Err)
		}
		e.buf = r.Value
	}
}

// end releases the buffer and closes the stream; the end of the stream is
// the normal end.
func (e *echo) end(err error) (error, bool) {
	e.buf.Release()
	e.buf = blitz.PooledBuf{}
	_ = e.s.Close()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err, true
}

// Cancel abandons the read or write in flight.
func (e *echo) Cancel() {
	e.s.CancelRead()
	e.s.CancelWrite()
	_, _ = e.end(nil)
}

// ExamplePooledBuf_Advance serves an echo whose writes keep their progress
// in the pooled buffer.
func ExamplePooledBuf_Advance() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	srv := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, func(s *blitz.TCPStream) future.Future[error] {
		return &echo{s: s}
	}, blitz.ServeConfig{}))
	defer srv.Cancel()

	c, err := net.Dial("tcp", l.AddrPort().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("ping"))
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil {
		panic(err)
	}
	fmt.Println(string(got))
	// Output: ping
}
