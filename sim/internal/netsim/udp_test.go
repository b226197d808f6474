package netsim

import (
	"encoding/binary"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// blast sends count numbered datagrams from a to b and returns the numbers
// b received, in arrival order.
func blast(t *testing.T, a, b *node, count int) []int {
	t.Helper()
	rx := b.socket(backend.Datagram)
	if err := b.be.Bind(rx, addr("0.0.0.0", 53)); err != nil {
		t.Fatal(err)
	}
	tx := a.socket(backend.Datagram)
	buf := make([]byte, 8)
	for i := range count {
		binary.BigEndian.PutUint64(buf, uint64(i))
		a.runOK(&backend.Op{Kind: backend.KindSendTo, FD: tx, Buf: buf, Addr: addr("10.0.0.2", 53)})
	}
	var got []int
	for {
		op := &backend.Op{Kind: backend.KindRecvFrom, FD: rx, Buf: make([]byte, 64), Timeout: 10 * time.Millisecond}
		c := b.run(op)
		if c.Err == backend.ErrTimeout {
			return got
		}
		if c.Err != nil || c.N != 8 || c.Addr.IP.Addr() != a.h.Addr() {
			t.Fatalf("recvfrom: %+v", c)
		}
		got = append(got, int(binary.BigEndian.Uint64(op.Buf)))
	}
}

func TestDatagramLossAndDuplication(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, 21)
		w.SetLoss(0.1)
		w.SetDuplicate(0.05)
		const n = 2000
		got := blast(t, a, b, n)
		seen := make(map[int]int)
		dups := 0
		for i, v := range got {
			if seen[v]++; seen[v] > 1 {
				dups++
			}
			if i > 0 && v < got[i-1] {
				t.Fatalf("reordered without SetReorder: %d after %d", v, got[i-1])
			}
		}
		lost := n - len(seen)
		if lost < 150 || lost > 250 || dups < 60 || dups > 140 {
			t.Fatalf("lost %d, duplicated %d of %d (want about 200 and 90)", lost, dups, n)
		}
	})
}

func TestDatagramReorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, 22)
		w.SetReorder(0.5)
		got := blast(t, a, b, 200)
		inversions := 0
		for i := 1; i < len(got); i++ {
			if got[i] < got[i-1] {
				inversions++
			}
		}
		if len(got) != 200 || inversions == 0 {
			t.Fatalf("got %d datagrams, %d inversions", len(got), inversions)
		}
	})
}

func TestDatagramConnectedAndPartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, 23)
		rx := b.socket(backend.Datagram)
		_ = b.be.Bind(rx, addr("10.0.0.2", 9))
		tx := a.socket(backend.Datagram)
		a.runOK(&backend.Op{Kind: backend.KindConnect, FD: tx, Addr: addr("10.0.0.2", 9)})
		a.runOK(&backend.Op{Kind: backend.KindSend, FD: tx, Buf: []byte("one")})
		rd := &backend.Op{Kind: backend.KindRecv, FD: rx, Buf: make([]byte, 2)}
		if c := b.runOK(rd); c.N != 2 || string(rd.Buf) != "on" {
			t.Fatalf("truncated recv: %+v", c)
		}
		w.Partition([]string{"a"}, []string{"b"})
		a.runOK(&backend.Op{Kind: backend.KindSend, FD: tx, Buf: []byte("two")})
		if c := b.run(&backend.Op{Kind: backend.KindRecv, FD: rx, Buf: make([]byte, 8), Timeout: time.Second}); c.Err != backend.ErrTimeout {
			t.Fatalf("datagram crossed a partition: %+v", c)
		}
	})
}
