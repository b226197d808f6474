package blitz_test

import (
	"context"
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
