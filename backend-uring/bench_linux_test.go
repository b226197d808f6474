//go:build linux

package uring

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
)

// BenchmarkNop is one Submit + Wait round trip of a NOP.
func BenchmarkNop(b *testing.B) {
	be := newTest(b, Options{})
	op := &backend.Op{Kind: backend.KindNop}
	out := make([]Completion, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := be.Submit(op); err != nil {
			b.Fatal(err)
		}
		if n, err := be.Wait(out, -1); n != 1 || err != nil {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkWaitEmpty is a Wait that does not wait on a ring with nothing
// to reap: the look a worker takes at its ring between two ticks.
func BenchmarkWaitEmpty(b *testing.B) {
	be := newTest(b, Options{})
	out := make([]Completion, 16)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := be.Wait(out, 0); n != 0 || err != nil {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkEcho is a 64-byte ping-pong over loopback TCP: through one
// io_uring backend driven by one goroutine (uring), and through package net
// with a client and an echo goroutine (net).
func BenchmarkEcho(b *testing.B) {
	b.Run("uring", benchEchoUring)
	b.Run("net", benchEchoNet)
}

func benchEchoUring(b *testing.B) {
	be := newTest(b, Options{})
	ln := listener(b, be)
	la, err := be.LocalAddr(ln)
	require.NoError(b, err)
	cl, err := be.Socket(backend.FamilyInet4, backend.Stream)
	require.NoError(b, err)
	out := make([]Completion, 4)
	run := func(ops ...*backend.Op) {
		for _, op := range ops {
			if err := be.Submit(op); err != nil {
				b.Fatal(err)
			}
		}
		for left := len(ops); left > 0; {
			n, err := be.Wait(out, -1)
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range out[:n] {
				if c.Err != nil {
					b.Fatal(c.Err)
				}
			}
			left -= n
		}
	}
	acc := &backend.Op{Kind: backend.KindAccept, FD: ln}
	run(acc, &backend.Op{Kind: backend.KindConnect, FD: cl, Addr: la})
	var srv backend.FD
	for _, c := range out[:2] {
		if c.Op == acc {
			srv = c.FD
		}
	}
	b.Cleanup(func() { be.CloseFD(cl); be.CloseFD(srv) })
	be.SetOption(cl, backend.OptNoDelay, 1)
	be.SetOption(srv, backend.OptNoDelay, 1)
	ping, pong, sbuf, cbuf := make([]byte, 64), make([]byte, 64), make([]byte, 64), make([]byte, 64)
	send1 := &backend.Op{Kind: backend.KindSend, FD: cl, Buf: ping}
	recv1 := &backend.Op{Kind: backend.KindRecv, FD: srv, Buf: sbuf}
	send2 := &backend.Op{Kind: backend.KindSend, FD: srv, Buf: pong}
	recv2 := &backend.Op{Kind: backend.KindRecv, FD: cl, Buf: cbuf}
	b.SetBytes(64)
	b.ReportAllocs()
	for b.Loop() {
		run(recv1, send1) // 64 bytes are small enough to arrive whole on loopback
		run(recv2, send2)
	}
}

func benchEchoNet(b *testing.B) {
	addr := netEchoServer(b)
	c, err := net.Dial("tcp4", addr)
	require.NoError(b, err)
	buf := make([]byte, 64)
	b.SetBytes(64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
}

// netEchoServer starts a goroutine-per-connection echo server over net on
// loopback and returns its address; the cleanup closes the listener and
// waits for the server's goroutines, which end when their clients close.
func netEchoServer(b *testing.B) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(b, err)
	var wg sync.WaitGroup
	b.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
