//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
)

// group is a registered buffer group: count buffers of size bytes in an
// arena whose chunks are made as buffers are first taken, and a free list
// whose top is the lowest id, so that the memory follows the most buffers
// in use at once.
type group struct {
	size  int
	count int
	mem   *backend.BufferArena // immutable after registration

	// mu guards free and held.
	mu   sync.Mutex
	free []uint16 // stack of free buffer ids
	held []bool   // held[id]: taken by a completion, not yet released
}

// take pops a free buffer.
func (g *group) take() (uint16, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.free) == 0 {
		return 0, false
	}
	id := g.free[len(g.free)-1]
	g.free = g.free[:len(g.free)-1]
	g.held[id] = true
	return id, true
}

// put gives id back; it reports false when id was not held.
func (g *group) put(id uint16) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if int(id) >= g.count || !g.held[id] {
		return false
	}
	g.held[id] = false
	g.free = append(g.free, id)
	return true
}

func (g *group) buffer(id uint16) []byte { return g.mem.Buffer(int(id)) }

// groups is the set of buffer groups: those of the first few ids in an
// array, the others in a map replaced (never modified) on registration;
// both read without a lock. Every pooled read looks its group up twice (its
// buffer, then the release), and a map of uint16 keys hashes them each
// time.
type groups struct {
	mu    sync.Mutex // serializes registrations
	small [smallGroups]atomic.Pointer[group]
	m     atomic.Pointer[map[uint16]*group]
}

// smallGroups is the number of group ids kept in the array.
const smallGroups = 8

func (gs *groups) get(id uint16) *group {
	if id < smallGroups {
		return gs.small[id].Load() // load-acquire: pairs with set's Store
	}
	if m := gs.m.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// set publishes g as group id. gs.mu must be held.
func (gs *groups) set(id uint16, g *group) {
	if id < smallGroups {
		gs.small[id].Store(g)
		return
	}
	old := gs.m.Load()
	m := make(map[uint16]*group, 1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[id] = g
	gs.m.Store(&m)
}

// RegisterBufferGroup makes group id with count buffers of size bytes.
func (r *Reactor) RegisterBufferGroup(id uint16, count, size int) error {
	if count < 1 || count > 32768 || count&(count-1) != 0 || size < 1 || size > 1<<20 {
		return backend.NewError("register buffer group", backend.ErrInvalid, fmt.Errorf("count %d size %d", count, size))
	}
	if int64(count)*int64(size) > math.MaxInt {
		return backend.NewError("register buffer group", backend.ErrNoMemory, nil)
	}
	gs := &r.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if r.closed.Load() {
		return backend.ErrClosed
	}
	if gs.get(id) != nil {
		return backend.NewError("register buffer group", backend.ErrExists, nil)
	}
	g := &group{size: size, count: count, mem: backend.NewBufferArena(count, size), held: make([]bool, count)}
	g.free = make([]uint16, count)
	for i := range g.free {
		g.free[i] = uint16(count - 1 - i) // id 0 on top
	}
	gs.set(id, g)
	return nil
}

// Buffer returns buffer id of group g, or nil if there is none.
func (r *Reactor) Buffer(g, id uint16) []byte {
	grp := r.groups.get(g)
	if grp == nil || int(id) >= grp.count {
		return nil
	}
	return grp.buffer(id)
}

// ReleaseBuffer gives buffer id back to group g.
func (r *Reactor) ReleaseBuffer(g, id uint16) error {
	grp := r.groups.get(g)
	if grp == nil || !grp.put(id) {
		return backend.NewError("release buffer", backend.ErrInvalid, fmt.Errorf("group %d buffer %d not held", g, id))
	}
	return nil
}
