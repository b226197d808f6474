package reactor

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// TestGroupIDs: groups of ids in the array (under smallGroups) and in the
// map beside it are each found, buffers of each are taken and given back,
// a second registration of either kind fails with ErrExists, and an id
// never registered has no buffers.
func TestGroupIDs(t *testing.T) {
	r := New(quietPoller{})
	defer r.Close()
	ids := []uint16{0, 1, smallGroups - 1, smallGroups, 300, 65535}
	for i, id := range ids {
		if err := r.RegisterBufferGroup(id, 2, 16+i); err != nil {
			t.Fatalf("group %d: %v", id, err)
		}
	}
	for i, id := range ids {
		if err := r.RegisterBufferGroup(id, 2, 16); !errors.Is(err, backend.ErrExists) {
			t.Errorf("group %d registered twice: %v", id, err)
		}
		g := r.groups.get(id)
		if g == nil || len(g.Buffer(0)) != 16+i {
			t.Fatalf("group %d: %+v", id, g)
		}
		if b := r.Buffer(id, 1); len(b) != 16+i {
			t.Errorf("group %d: buffer of %d bytes, want %d", id, len(b), 16+i)
		}
		b, ok := g.Take()
		if !ok {
			t.Fatalf("group %d: no buffer to take", id)
		}
		if err := r.ReleaseBuffer(id, b); err != nil {
			t.Errorf("group %d: release: %v", id, err)
		}
	}
	for _, id := range []uint16{2, smallGroups + 1, 301} {
		if r.groups.get(id) != nil || r.Buffer(id, 0) != nil {
			t.Errorf("group %d was never registered, yet found", id)
		}
	}
}
