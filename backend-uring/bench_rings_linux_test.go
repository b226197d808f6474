//go:build linux

package uring

import (
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// BenchmarkEchoRings measures what the runtime's ring-per-worker design
// rests on: 64 loopback TCP pairs making 64-byte round trips (b.N in all),
// each ring driven by one event loop of its own (a goroutine locked to its
// thread), against goroutines over net. Sub-benchmarks:
//
//   - oneRing: one ring for everything, the runtime's layout before
//     per-worker rings;
//   - ringPerThread: one ring per GOMAXPROCS, both ends of a pair on the
//     same ring;
//   - ringPerThreadCrossed: the same, but the server end of each pair on
//     another ring than its client (what a runtime serving its own clients
//     gets for about half its pairs): the kernel finishes each receive on
//     the thread of the ring that submitted it, so every round trip crosses
//     threads;
//   - ringPerThreadCrossedNoCoop: the same without COOP_TASKRUN, so that
//     each crossing may interrupt the ring's thread while it runs;
//   - net: goroutine-per-connection net at both ends.
func BenchmarkEchoRings(b *testing.B) {
	b.Run("oneRing", func(b *testing.B) { benchEchoRings(b, 1, false, Options{}) })
	b.Run("ringPerThread", func(b *testing.B) { benchEchoRings(b, runtime.GOMAXPROCS(0), false, Options{}) })
	for _, c := range []struct {
		name string
		o    Options
	}{{"ringPerThreadCrossed", Options{}}, {"ringPerThreadCrossedNoCoop", Options{DisableCoopTaskrun: true}}} {
		b.Run(c.name, func(b *testing.B) {
			if runtime.GOMAXPROCS(0) < 2 {
				b.Skip("needs two threads")
			}
			benchEchoRings(b, runtime.GOMAXPROCS(0), true, c.o)
		})
	}
	b.Run("net", benchEchoRingsNet)
}

// echoPair is one connection: both ends' ops and buffers.
type echoPair struct {
	c, s                       int
	crecv, csend, srecv, ssend backend.Op
	cbuf, sbuf, msg            [64]byte
	got                        int
}

const echoPairs = 64

// loopbackPairs connects n TCP pairs over loopback with plain system calls.
func loopbackPairs(b *testing.B, n int) []*echoPair {
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(ln)
	if err := unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		b.Fatal(err)
	}
	if err := unix.Listen(ln, n); err != nil {
		b.Fatal(err)
	}
	la, err := unix.Getsockname(ln)
	if err != nil {
		b.Fatal(err)
	}
	ps := make([]*echoPair, n)
	for i := range ps {
		c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := unix.Connect(c, la); err != nil {
			b.Fatal(err)
		}
		s, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		for _, fd := range []int{c, s} {
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			_ = unix.SetNonblock(fd, true)
		}
		p := &echoPair{c: c, s: s}
		p.srecv = backend.Op{Kind: backend.KindRecv, Flags: backend.PollFirst, FD: backend.FD(s), Buf: p.sbuf[:], Owner: p}
		p.crecv = backend.Op{Kind: backend.KindRecv, Flags: backend.PollFirst, FD: backend.FD(c), Buf: p.cbuf[:], Owner: p}
		p.csend = backend.Op{Kind: backend.KindSend, FD: backend.FD(c), Buf: p.msg[:], Owner: p}
		p.ssend = backend.Op{Kind: backend.KindSend, FD: backend.FD(s), Owner: p}
		ps[i] = p
		b.Cleanup(func() { unix.Close(c); unix.Close(s) })
	}
	return ps
}

func benchEchoRings(b *testing.B, rings int, crossed bool, o Options) {
	ps := loopbackPairs(b, echoPairs)
	ringOf := func(i int, server bool) int {
		r := i * rings / echoPairs
		if crossed && server {
			r = (r + 1) % rings
		}
		return r
	}
	var left, active atomic.Int64
	left.Store(int64(b.N))
	active.Store(echoPairs)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for r := range rings {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			be, err := New(o)
			if err != nil {
				b.Error(err)
				ready.Done()
				return
			}
			defer be.Close()
			for i, p := range ps {
				if ringOf(i, true) == r {
					_ = be.Submit(&p.srecv)
				}
				if ringOf(i, false) == r {
					_ = be.Submit(&p.csend)
					_ = be.Submit(&p.crecv)
				}
			}
			ready.Done()
			<-start
			echoLoop(b, be, &left, &active)
		}()
	}
	ready.Wait()
	b.ResetTimer()
	t0 := time.Now()
	close(start)
	done.Wait()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "rt/s")
}

// echoLoop drives one ring until every pair is done: a server recv is
// echoed back, a client recv that has the whole message counts a round
// trip and starts the next.
func echoLoop(b *testing.B, be *Backend, left, active *atomic.Int64) {
	out := make([]Completion, 256)
	for active.Load() > 0 {
		n, err := be.Wait(out, 10*time.Millisecond)
		if err != nil {
			b.Error(err)
			return
		}
		for _, c := range out[:n] {
			p := c.Op.Owner.(*echoPair)
			if c.Err != nil {
				b.Error(c.Err)
				active.Store(0)
				return
			}
			switch c.Op {
			case &p.srecv:
				p.ssend.Buf = p.sbuf[:c.N]
				_ = be.Submit(&p.ssend)
			case &p.ssend:
				_ = be.Submit(&p.srecv)
			case &p.crecv:
				if p.got += c.N; p.got < len(p.cbuf) {
					p.crecv.Buf = p.cbuf[p.got:]
					_ = be.Submit(&p.crecv)
					continue
				}
				p.got, p.crecv.Buf = 0, p.cbuf[:]
				if left.Add(-1) < 0 {
					active.Add(-1)
					continue
				}
				_ = be.Submit(&p.csend)
				_ = be.Submit(&p.crecv)
			}
		}
	}
}

func benchEchoRingsNet(b *testing.B) {
	addr := netEchoServer(b)
	var err error
	cs := make([]net.Conn, echoPairs)
	for i := range cs {
		if cs[i], err = net.Dial("tcp4", addr); err != nil {
			b.Fatal(err)
		}
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			msg, buf := make([]byte, 64), make([]byte, 64)
			for left.Add(-1) >= 0 {
				if _, err := c.Write(msg); err != nil {
					b.Error(err)
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "rt/s")
}
