package websocket

import (
	"runtime"
	"testing"

	"github.com/blitz-go/blitz"
)

// idleMemberBytes returns the live heap that n idle members of a
// Broadcaster cost, per member: the connections are made before the first
// measurement, so only the set's entries (and whatever a member holds)
// count.
func idleMemberBytes(t testing.TB, n int) float64 {
	conns := make([]*Conn, n)
	for i := range conns {
		conns[i] = newConn(&bytesTransport{}, false, "", nil, nil)
	}
	b := NewBroadcaster(blitz.Handle{}, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, c := range conns {
		b.Add(c)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if b.Len() != n {
		t.Fatalf("%d members, want %d", b.Len(), n)
	}
	runtime.KeepAlive(b)
	runtime.KeepAlive(conns)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
}

// An idle member costs its entry in the set, no record of its own: under
// 40 bytes each (the map's slot, its control byte and the table's free
// slots), where a 24-byte record per member made it about 54.
func TestBroadcastIdleMemberMemory(t *testing.T) {
	const n = 10000
	per := idleMemberBytes(t, n)
	t.Logf("%.1f bytes per idle member (%d members)", per, n)
	if per > 40 {
		t.Errorf("an idle member costs %.1f bytes, over 40", per)
	}
}
