//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// group is a registered buffer group: a backend.BufferStack, whose
// memory follows the most buffers in use at once and whose idle buffers
// give their pages back (TrimIdle; unixio.ReleasePages).
type group = backend.BufferStack

// groups is the set of buffer groups: those of the first few ids in an
// array, the others in a map replaced (never modified) on registration;
// both read without a lock. Every pooled read looks its group up twice (its
// buffer, then the release), and a map of uint16 keys hashes them each
// time.
type groups struct {
	mu sync.Mutex // serializes registrations
	// trimPending says some group may have free buffers to release; see
	// group and TrimIdle.
	trimPending atomic.Bool
	small       [smallGroups]atomic.Pointer[group]
	m           atomic.Pointer[map[uint16]*group]
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
	g := backend.NewBufferStack(count, size, &gs.trimPending, releasePages)
	gs.set(id, g)
	return nil
}

// Buffer returns buffer id of group g, or nil if there is none.
func (r *Reactor) Buffer(g, id uint16) []byte {
	grp := r.groups.get(g)
	if grp == nil {
		return nil
	}
	return grp.Buffer(id)
}

// ReleaseBuffer gives buffer id back to group g.
func (r *Reactor) ReleaseBuffer(g, id uint16) error {
	grp := r.groups.get(g)
	if grp == nil || !grp.Put(id) {
		return backend.NewError("release buffer", backend.ErrInvalid, fmt.Errorf("group %d buffer %d not held", g, id))
	}
	return nil
}

// releasePages gives back the whole pages inside buf, for the groups.
func releasePages(buf []byte) { _ = unixio.ReleasePages(buf) }

var _ backend.Trimmer = (*Reactor)(nil)

// TrimIdle gives back the pages of free buffers that have stayed untaken
// for backend.BufferTrimAfter, in every group, and returns how long until it should be
// called again (0 when no group has buffers to release); see group and
// backend.Trimmer. Any goroutine may call it.
func (r *Reactor) TrimIdle() time.Duration {
	gs := &r.groups
	if !gs.trimPending.Load() {
		return 0
	}
	// Cleared before the groups are looked at: a put after this sets it
	// again, and one before it is seen below, under the group's mu.
	gs.trimPending.Store(false)
	now := time.Now()
	wait := time.Duration(0)
	gs.each(func(g *group) {
		if d := g.TrimIdle(now); d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	})
	if wait > 0 {
		gs.trimPending.Store(true)
	}
	return wait
}

// each calls f with every registered group. Any goroutine.
func (gs *groups) each(f func(*group)) {
	for i := range gs.small {
		if g := gs.small[i].Load(); g != nil { // load-acquire: pairs with set's Store
			f(g)
		}
	}
	if m := gs.m.Load(); m != nil {
		for _, g := range *m {
			f(g)
		}
	}
}
