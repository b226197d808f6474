//go:build linux

package epoll_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// BenchmarkEcho: a 64-byte ping-pong over loopback TCP, blitz's epoll
// backend driven by one goroutine against a plain net client/server
// goroutine pair.
func BenchmarkEcho(b *testing.B) {
	b.Run("blitz-epoll", benchEchoBlitz)
	b.Run("net", benchEchoNet)
}

func benchEchoBlitz(b *testing.B) {
	be := open(b)
	c := newCollector(b, be)
	cl, sv := tcpPair(b, be, c)
	ping, pong := make([]byte, 64), make([]byte, 64)
	out := make([]backend.Completion, 4)
	// step sends buf on from and receives it on to.
	step := func(from, to backend.FD, buf []byte, send, recv *backend.Op) {
		*send = backend.Op{Kind: backend.KindSend, FD: from, Buf: buf}
		*recv = backend.Op{Kind: backend.KindRecv, FD: to, Buf: buf}
		if err := be.Submit(send); err != nil {
			b.Fatal(err)
		}
		if err := be.Submit(recv); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < 2; {
			n, err := be.Wait(out, time.Second)
			if err != nil || n == 0 {
				b.Fatalf("Wait: %d %v", n, err)
			}
			for _, comp := range out[:n] {
				if comp.Err != nil || comp.N != 64 {
					b.Fatalf("%v: %d %v", comp.Op.Kind, comp.N, comp.Err)
				}
			}
			got += n
		}
	}
	var send, recv backend.Op
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		step(cl, sv, ping, &send, &recv)
		step(sv, cl, pong, &send, &recv)
	}
}

func benchEchoNet(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		buf := make([]byte, 64)
		for {
			if _, err := io.ReadFull(conn, buf); err != nil {
				return
			}
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := conn.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	conn.Close()
	<-done
}
