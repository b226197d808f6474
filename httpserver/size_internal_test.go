package httpserver

import (
	"math/rand/v2"
	"net"
	"testing"
	"unsafe"
)

// TestIdleConnSize pins what an idle keep-alive connection holds beside
// its task and its socket: the conn record, in the 192-byte size class with
// its links in the server's list of connections (the request state,
// active, exists only while a request is in progress).
func TestIdleConnSize(t *testing.T) {
	if n := unsafe.Sizeof(conn{}); n > 192 {
		t.Errorf("conn is %d bytes, want at most 192", n)
	}
}

// The server's list of connections against a set, under random adds and
// removes (removes repeated, as a connection may close twice): the same
// members, and a count that agrees.
func TestConnListModel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	s := &Server{}
	s.init()
	model := map[*conn]bool{}
	var all []*conn
	for range 5000 {
		if len(all) == 0 || rnd.IntN(3) > 0 {
			c, err := s.newConn(nopConn{})
			if err != nil {
				t.Fatal(err)
			}
			model[c] = true
			all = append(all, c)
		} else {
			c := all[rnd.IntN(len(all))]
			s.removeConn(c)
			delete(model, c)
		}
		if rnd.IntN(50) == 0 {
			s.mu.Lock()
			got := s.connsLocked()
			n := s.nconns
			s.mu.Unlock()
			if n != len(model) || len(got) != len(model) {
				t.Fatalf("%d listed, count %d, want %d", len(got), n, len(model))
			}
			for _, c := range got {
				if !model[c] {
					t.Fatal("a removed connection is listed")
				}
			}
		}
	}
}

// nopConn is a Conn that does nothing, for the list's model.
type nopConn struct{ Conn }

func (nopConn) RemoteAddr() net.Addr { return nil }
func (nopConn) Close() error         { return nil }
