//go:build windows

package iocp

import (
	"net/netip"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// tb wraps a backend for this package's own tests.
type tb struct {
	t   *testing.T
	b   *Backend
	out []backend.Completion
	got []backend.Completion // completions read but not yet asked for
}

func newTB(t *testing.T) *tb {
	t.Helper()
	b, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	x := &tb{t: t, b: b, out: make([]backend.Completion, 16)}
	t.Cleanup(func() { b.Close() })
	return x
}

func (x *tb) submit(op *backend.Op) {
	x.t.Helper()
	if err := x.b.Submit(op); err != nil {
		x.t.Fatalf("Submit %s: %v", op.Kind, err)
	}
}

// wait returns the next completion of op, waiting up to 5 s.
func (x *tb) wait(op *backend.Op) backend.Completion {
	x.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for i, c := range x.got {
			if c.Op == op {
				x.got = append(x.got[:i], x.got[i+1:]...)
				return c
			}
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("no completion for %s (UserData %d)", op.Kind, op.UserData)
		}
		n, err := x.b.Wait(x.out, 100*time.Millisecond)
		if err != nil {
			x.t.Fatalf("Wait: %v", err)
		}
		x.got = append(x.got, x.out[:n]...)
	}
}

func (x *tb) run(op *backend.Op) backend.Completion {
	x.t.Helper()
	x.submit(op)
	return x.wait(op)
}

// listener makes a listening TCP socket on loopback of family.
func (x *tb) listener(family backend.Family) (backend.FD, backend.Addr) {
	x.t.Helper()
	fd, err := x.b.Socket(family, backend.Stream)
	if err != nil {
		x.t.Fatalf("Socket: %v", err)
	}
	ip := netip.MustParseAddr("127.0.0.1")
	if family == backend.FamilyInet6 {
		ip = netip.IPv6Loopback()
	}
	if err := x.b.Bind(fd, backend.AddrPort(netip.AddrPortFrom(ip, 0))); err != nil {
		x.t.Fatalf("Bind: %v", err)
	}
	if err := x.b.Listen(fd, 0); err != nil {
		x.t.Fatalf("Listen: %v", err)
	}
	a, err := x.b.LocalAddr(fd)
	if err != nil {
		x.t.Fatalf("LocalAddr: %v", err)
	}
	x.t.Cleanup(func() { x.b.CloseFD(fd) })
	return fd, a
}

// pair returns a connected client and server socket, through AcceptEx and
// ConnectEx.
func (x *tb) pair() (client, server backend.FD) {
	x.t.Helper()
	ln, a := x.listener(backend.FamilyInet4)
	c, err := x.b.Socket(backend.FamilyInet4, backend.Stream)
	if err != nil {
		x.t.Fatalf("Socket: %v", err)
	}
	acc := &backend.Op{Kind: backend.KindAccept, FD: ln}
	con := &backend.Op{Kind: backend.KindConnect, FD: c, Addr: a}
	x.submit(acc)
	x.submit(con)
	if cc := x.wait(con); cc.Err != nil {
		x.t.Fatalf("connect: %v", cc.Err)
	}
	ac := x.wait(acc)
	if ac.Err != nil {
		x.t.Fatalf("accept: %v", ac.Err)
	}
	x.t.Cleanup(func() { x.b.CloseFD(c); x.b.CloseFD(ac.FD) })
	return c, ac.FD
}
