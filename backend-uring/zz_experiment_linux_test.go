//go:build linux

package uring

import (
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

func tcpPair(t testing.TB, ln int, la unix.Sockaddr) (int, int) {
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Connect(c, la); err != nil && err != unix.EINPROGRESS {
		t.Fatal(err)
	}
	var s int
	for {
		s, _, err = unix.Accept4(ln, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err == unix.EAGAIN {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	time.Sleep(time.Millisecond)
	unix.SetsockoptInt(c, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	unix.SetsockoptInt(s, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	return c, s
}

type xpair struct {
	c, s                       int
	crecv, csend, srecv, ssend backend.Op
	cbuf, sbuf, msg            [64]byte
	got                        int
}

func BenchmarkXMultiRing(b *testing.B) {
	const pairs = 64
	rings, _ := strconv.Atoi(os.Getenv("XRINGS"))
	if rings == 0 {
		rings = 2
	}
	lock := os.Getenv("XLOCK") != ""
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(ln)
	unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	unix.Listen(ln, 1024)
	la, _ := unix.Getsockname(ln)
	ps := make([]*xpair, pairs)
	for i := range ps {
		c, s := tcpPair(b, ln, la)
		ps[i] = &xpair{c: c, s: s}
		defer unix.Close(c)
		defer unix.Close(s)
	}
	cross := os.Getenv("XCROSS") != ""
	var left atomic.Int64
	left.Store(int64(b.N))
	bes := make([]*Backend, rings)
	xdefer := false
	for r := range bes {
		if !xdefer {
			bes[r], _ = New(Options{})
			defer bes[r].Close()
		}
	}
	ready := make(chan struct{})
	var rwg sync.WaitGroup
	ringOf := func(i int, server bool) int {
		r := i * rings / pairs
		if cross && server {
			r = (r + 1) % rings
		}
		return r
	}
	for _, p := range ps {
		p.srecv = backend.Op{Kind: backend.KindRecv, Flags: backend.PollFirst, FD: backend.FD(p.s), Buf: p.sbuf[:], Owner: p}
		p.crecv = backend.Op{Kind: backend.KindRecv, Flags: backend.PollFirst, FD: backend.FD(p.c), Buf: p.cbuf[:], Owner: p}
		p.csend = backend.Op{Kind: backend.KindSend, FD: backend.FD(p.c), Buf: p.msg[:], Owner: p}
		p.ssend = backend.Op{Kind: backend.KindSend, FD: backend.FD(p.s), Owner: p}
	}
	initial := func(r int) {
		for i, p := range ps {
			if ringOf(i, true) == r {
				bes[r].Submit(&p.srecv)
			}
			if ringOf(i, false) == r {
				bes[r].Submit(&p.csend)
				bes[r].Submit(&p.crecv)
			}
		}
	}
	if !xdefer {
		for r := range bes {
			initial(r)
		}
	}
	var gactive atomic.Int64
	gactive.Store(pairs)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for r := range rings {
		rwg.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lock {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			if xdefer {
				var err error
				if bes[r], err = New(Options{}); err != nil {
					b.Error(err)
				}
				defer bes[r].Close()
				initial(r)
			}
			rwg.Done()
			<-ready
			be := bes[r]
			mine := ps[r*pairs/rings : (r+1)*pairs/rings]
			out := make([]Completion, 256)
			_ = mine
			for gactive.Load() > 0 {
				n, err := be.Wait(out, 10*time.Millisecond)
				if err != nil {
					b.Error(err)
					return
				}
				for _, c := range out[:n] {
					p := c.Op.Owner.(*xpair)
					if c.Err != nil {
						b.Error(c.Err)
						return
					}
					switch c.Op {
					case &p.srecv:
						p.ssend.Buf = p.sbuf[:c.N]
						be.Submit(&p.ssend)
					case &p.ssend:
						be.Submit(&p.srecv)
					case &p.csend:
					case &p.crecv:
						p.got += c.N
						if p.got < 64 {
							p.crecv.Buf = p.cbuf[p.got:]
							be.Submit(&p.crecv)
							continue
						}
						p.got = 0
						p.crecv.Buf = p.cbuf[:]
						if left.Add(-1) < 0 {
							gactive.Add(-1)
							continue
						}
						be.Submit(&p.csend)
						be.Submit(&p.crecv)
					}
				}
			}
		}()
	}
	rwg.Wait()
	close(ready)
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rt/s")
}

func BenchmarkXNet(b *testing.B) {
	const conns = 64
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
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
	cs := make([]net.Conn, conns)
	for i := range cs {
		cs[i], _ = net.Dial("tcp", ln.Addr().String())
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			msg, buf := make([]byte, 64), make([]byte, 64)
			for left.Add(-1) >= 0 {
				c.Write(msg)
				io.ReadFull(c, buf)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rt/s")
}
