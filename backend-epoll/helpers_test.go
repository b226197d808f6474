//go:build linux

package epoll_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend-epoll"
)

// open makes a backend closed at the end of the test.
func open(tb testing.TB) backend.Backend {
	tb.Helper()
	b, err := epoll.New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

// collector gathers completions by op.
type collector struct {
	tb  testing.TB
	b   backend.Backend
	out []backend.Completion
	got map[*backend.Op][]backend.Completion
}

func newCollector(tb testing.TB, b backend.Backend) *collector {
	return &collector{tb: tb, b: b, out: make([]backend.Completion, 64), got: map[*backend.Op][]backend.Completion{}}
}

// pump waits once.
func (c *collector) pump(timeout time.Duration) int {
	c.tb.Helper()
	n, err := c.b.Wait(c.out, timeout)
	if err != nil {
		c.tb.Fatalf("Wait: %v", err)
	}
	for _, comp := range c.out[:n] {
		c.got[comp.Op] = append(c.got[comp.Op], comp)
	}
	return n
}

// wait returns op's next completion, waiting up to 5s.
func (c *collector) wait(op *backend.Op) backend.Completion {
	c.tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(c.got[op]) == 0 {
		if time.Now().After(deadline) {
			c.tb.Fatalf("op %d (%v) did not complete", op.UserData, op.Kind)
		}
		c.pump(100 * time.Millisecond)
	}
	comp := c.got[op][0]
	c.got[op] = c.got[op][1:]
	if len(c.got[op]) == 0 {
		delete(c.got, op)
	}
	return comp
}

// has reports whether op has a completion collected.
func (c *collector) has(op *backend.Op) bool { return len(c.got[op]) > 0 }

func submit(tb testing.TB, b backend.Backend, op *backend.Op) {
	tb.Helper()
	if err := b.Submit(op); err != nil {
		tb.Fatalf("Submit %v: %v", op.Kind, err)
	}
}

// tcpPair returns a connected loopback TCP pair (client, server), closed at
// the end of the test.
func tcpPair(tb testing.TB, b backend.Backend, c *collector) (backend.FD, backend.FD) {
	tb.Helper()
	ln, err := b.Socket(backend.FamilyInet4, backend.Stream)
	if err != nil {
		tb.Fatal(err)
	}
	defer b.CloseFD(ln)
	if err := b.Bind(ln, backend.AddrPort(netip.MustParseAddrPort("127.0.0.1:0"))); err != nil {
		tb.Fatal(err)
	}
	if err := b.Listen(ln, 16); err != nil {
		tb.Fatal(err)
	}
	addr, err := b.LocalAddr(ln)
	if err != nil {
		tb.Fatal(err)
	}
	cl, err := b.Socket(backend.FamilyInet4, backend.Stream)
	if err != nil {
		tb.Fatal(err)
	}
	acc := &backend.Op{Kind: backend.KindAccept, FD: ln}
	con := &backend.Op{Kind: backend.KindConnect, FD: cl, Addr: addr}
	submit(tb, b, acc)
	submit(tb, b, con)
	if r := c.wait(con); r.Err != nil {
		tb.Fatalf("connect: %v", r.Err)
	}
	r := c.wait(acc)
	if r.Err != nil {
		tb.Fatalf("accept: %v", r.Err)
	}
	tb.Cleanup(func() { b.CloseFD(cl); b.CloseFD(r.FD) })
	if err := b.SetOption(cl, backend.OptNoDelay, 1); err != nil {
		tb.Fatal(err)
	}
	if err := b.SetOption(r.FD, backend.OptNoDelay, 1); err != nil {
		tb.Fatal(err)
	}
	return cl, r.FD
}
