package netsim

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// node drives one host's backend from the test goroutine: it submits ops
// and pumps Wait, keeping completions of ops other than the one awaited.
type node struct {
	t   *testing.T
	h   *Host
	be  backend.Backend
	got map[*backend.Op][]backend.Completion
	out []backend.Completion
}

func newNode(t *testing.T, h *Host) *node {
	return &node{t: t, h: h, be: h.Backend(), got: make(map[*backend.Op][]backend.Completion), out: make([]backend.Completion, 16)}
}

// twoHosts makes a world with hosts a (10.0.0.1) and b (10.0.0.2).
func twoHosts(t *testing.T, seed uint64) (*World, *node, *node) {
	w := NewWorld(rand.New(rand.NewPCG(seed, 1)))
	a := w.AddHost("a", netip.MustParseAddr("10.0.0.1"))
	b := w.AddHost("b", netip.MustParseAddr("10.0.0.2"))
	return w, newNode(t, a), newNode(t, b)
}

// pump runs one Wait of up to d and files the completions.
func (n *node) pump(d time.Duration) int {
	n.t.Helper()
	k, err := n.be.Wait(n.out, d)
	if err != nil {
		n.t.Fatalf("%s: Wait: %v", n.h.Name(), err)
	}
	for _, c := range n.out[:k] {
		n.got[c.Op] = append(n.got[c.Op], c)
	}
	return k
}

// next returns op's next completion, waiting up to a virtual minute.
func (n *node) next(op *backend.Op) backend.Completion {
	n.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if q := n.got[op]; len(q) > 0 {
			n.got[op] = q[1:]
			return q[0]
		}
		if !time.Now().Before(deadline) {
			n.t.Fatalf("%s: no completion of %s", n.h.Name(), op.Kind)
		}
		n.pump(time.Until(deadline))
	}
}

// run submits op and returns its completion.
func (n *node) run(op *backend.Op) backend.Completion {
	n.t.Helper()
	n.submit(op)
	return n.next(op)
}

// runOK is run failing on an error.
func (n *node) runOK(op *backend.Op) backend.Completion {
	n.t.Helper()
	c := n.run(op)
	if c.Err != nil {
		n.t.Fatalf("%s: %s: %v", n.h.Name(), op.Kind, c.Err)
	}
	return c
}

func (n *node) submit(op *backend.Op) {
	n.t.Helper()
	if err := n.be.Submit(op); err != nil {
		n.t.Fatalf("%s: Submit %s: %v", n.h.Name(), op.Kind, err)
	}
}

// socket makes a socket, failing the test on error.
func (n *node) socket(typ backend.SockType) backend.FD {
	n.t.Helper()
	fd, err := n.be.Socket(backend.FamilyInet4, typ)
	if err != nil {
		n.t.Fatal(err)
	}
	return fd
}

// listen makes a listener on port.
func (n *node) listen(port uint16) backend.FD {
	n.t.Helper()
	fd := n.socket(backend.Stream)
	if err := n.be.Bind(fd, addr("0.0.0.0", port)); err != nil {
		n.t.Fatal(err)
	}
	if err := n.be.Listen(fd, 0); err != nil {
		n.t.Fatal(err)
	}
	return fd
}

func addr(ip string, port uint16) backend.Addr {
	return backend.AddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), port))
}

// connectPair connects client (on c) to a listener on s's port 80 and
// returns the client and the accepted descriptors.
func connectPair(t *testing.T, c, s *node) (backend.FD, backend.FD) {
	t.Helper()
	l := s.listen(80)
	acc := &backend.Op{Kind: backend.KindAccept, FD: l}
	s.submit(acc)
	cfd := c.socket(backend.Stream)
	c.runOK(&backend.Op{Kind: backend.KindConnect, FD: cfd, Addr: backend.AddrPort(netip.AddrPortFrom(s.h.Addr(), 80))})
	ac := s.next(acc)
	if ac.Err != nil {
		t.Fatalf("accept: %v", ac.Err)
	}
	return cfd, ac.FD
}

// send sends all of data on fd.
func (n *node) send(fd backend.FD, data []byte) {
	n.t.Helper()
	for len(data) > 0 {
		c := n.runOK(&backend.Op{Kind: backend.KindSend, FD: fd, Buf: data})
		data = data[c.N:]
	}
}

// recvAll reads from fd until end of stream or want bytes.
func (n *node) recvAll(fd backend.FD, want int) ([]byte, error) {
	n.t.Helper()
	var got []byte
	buf := make([]byte, 64<<10)
	for want < 0 || len(got) < want {
		c := n.run(&backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf})
		if c.Err != nil {
			return got, c.Err
		}
		if c.N == 0 {
			break
		}
		got = append(got, buf[:c.N]...)
	}
	return got, nil
}
