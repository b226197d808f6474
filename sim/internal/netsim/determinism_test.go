package netsim

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// script runs a fixed mix of TCP, UDP, faults and disk work and returns
// its trace, one line per event.
func script(t *testing.T, seed uint64) []string {
	var trace []string
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, seed)
		w.SetTrace(func(e Event) { trace = append(trace, e.String()) })
		w.SetLoss(0.2)
		w.SetReorder(0.3)
		cfd, sfd := connectPair(t, a, b)
		for i := range 5 {
			a.send(cfd, make([]byte, 1000*(i+1)))
		}
		if _, err := b.recvAll(sfd, 15000); err != nil {
			t.Fatal(err)
		}
		blast(t, a, b, 50)
		// Several ops completing at the same instant: their order is seeded.
		ops := make([]*backend.Op, 8)
		for i := range ops {
			ops[i] = &backend.Op{Kind: backend.KindTimeout, Timeout: time.Millisecond, UserData: uint64(i)}
			a.submit(ops[i])
		}
		for _, op := range ops {
			a.next(op)
		}
		fd, _ := a.open("/x", rwc)
		a.write(fd, 0, "hello")
		a.h.Crash()
		a.h.Restart()
	})
	return trace
}

func TestDeterministicTrace(t *testing.T) {
	one, two := script(t, 41), script(t, 41)
	if len(one) < 50 || !slices.Equal(one, two) {
		for i := range min(len(one), len(two)) {
			if one[i] != two[i] {
				t.Fatalf("event %d differs:\n%v\n%v", i, one[i], two[i])
			}
		}
		t.Fatalf("traces of %d and %d events", len(one), len(two))
	}
	if other := script(t, 42); slices.Equal(one, other) {
		t.Fatal("another seed gave the same trace")
	}
}
