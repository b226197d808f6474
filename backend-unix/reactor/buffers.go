//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// group is a registered buffer group: count buffers of size bytes in an
// arena whose chunks are made as buffers are first taken, and a free list
// whose top is the lowest id, so that the memory follows the most buffers
// in use at once.
//
// After a burst the buffers it needed go back to the free list, written and
// resident. The group gives their pages back once they have stayed unused
// for a while (TrimIdle, which a worker calls before it sleeps): the list
// is a stack, so the buffers below the lowest point the stack reached
// during a window of trimAfter were not taken in that window, and those
// beyond the trimKeep on top are released (unixio.ReleasePages). Released
// buffers stay on the list, below the others, and cost a page fault when
// taken again. Under a steady load the window's lowest point follows the
// buffers in use, and nothing is released.
type group struct {
	size  int
	count int
	mem   *backend.BufferArena // immutable after registration
	// pending is the reactor's flag that some group may have buffers to
	// release: set by put, cleared by TrimIdle. Immutable pointer.
	pending *atomic.Bool

	// mu guards free, held, clean, low and windowAt.
	mu   sync.Mutex
	free []uint16 // stack of free buffer ids
	held []bool   // held[id]: taken by a completion, not yet released
	// clean is how many buffers at the bottom of the stack hold no
	// resident pages: never taken, or released since. free[:clean] are
	// those: put adds on top, and a take that reaches into them lowers it.
	clean int
	// low is the fewest free buffers since windowAt: free[:low] were not
	// taken since then. windowAt is zero while no window runs.
	low      int
	windowAt time.Time
}

// trimAfter is how long free buffers must go untaken before their pages
// are given back: under a load that rises and falls, buffers come and go
// without a system call or a page fault each time.
const trimAfter = 250 * time.Millisecond

// trimKeep is how many free buffers a group keeps resident on top of its
// stack, for the first reads of the next burst.
const trimKeep = 16

// take pops a free buffer.
func (g *group) take() (uint16, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.free) - 1
	if n < 0 {
		return 0, false
	}
	id := g.free[n]
	g.free = g.free[:n]
	g.held[id] = true
	g.clean = min(g.clean, n)
	g.low = min(g.low, n)
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
	if len(g.free)-g.clean > trimKeep && !g.pending.Load() { // load: the flag is mostly set already
		g.pending.Store(true) // store: after the append, under mu; TrimIdle clears it before it looks
	}
	return true
}

// trimIdle releases the free buffers that were not taken during the
// window that ended at now, if it has; it reports how long until the
// current window ends, 0 when the group has nothing to release.
func (g *group) trimIdle(now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.windowAt.IsZero() || len(g.free)-g.clean <= trimKeep {
		return g.nextWindow(now)
	}
	if d := trimAfter - now.Sub(g.windowAt); d > 0 {
		return d
	}
	if end := min(g.low, len(g.free)-trimKeep); end > g.clean {
		g.release(g.free[g.clean:end])
		g.clean = end // also if a release failed: the pages stay, no harm beyond the memory
	}
	return g.nextWindow(now)
}

// nextWindow starts a window at now if the group has more than trimKeep
// free buffers to release, and returns its length; otherwise it ends the
// window and returns 0. Called with g.mu held.
func (g *group) nextWindow(now time.Time) time.Duration {
	if len(g.free)-g.clean <= trimKeep {
		g.windowAt = time.Time{}
		return 0
	}
	g.windowAt, g.low = now, len(g.free)
	return trimAfter
}

func (g *group) buffer(id uint16) []byte { return g.mem.Buffer(int(id)) }

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
	g := &group{size: size, count: count, mem: backend.NewBufferArena(count, size), held: make([]bool, count), pending: &gs.trimPending}
	g.mem.SetFreshChunk(freshChunk)
	g.free = make([]uint16, count)
	g.clean = count
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

// release gives back the pages of the free buffers ids, in one system
// call per run of consecutive ids within a chunk (after a burst most of
// the stack is such runs), so that the group's lock is held briefly and
// pages larger than a buffer are released too. Called with g.mu held.
func (g *group) release(ids []uint16) {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for i := 0; i < len(sorted); {
		first, n := int(sorted[i]), 1
		for i+n < len(sorted) && int(sorted[i+n]) == first+n && g.mem.Contiguous(first, n+1) != nil {
			n++
		}
		_ = unixio.ReleasePages(g.mem.Contiguous(first, n)) // nil (never made) releases nothing
		i += n
	}
}

// freshChunk gives back the pages of a chunk the arena has just made: the
// Go heap may hand out memory it used before, zeroed and so resident, and
// the group counts buffers never taken as holding none (clean).
func freshChunk(c []byte) { _ = unixio.ReleasePages(c) }

var _ backend.Trimmer = (*Reactor)(nil)

// TrimIdle gives back the pages of free buffers that have stayed untaken
// for trimAfter, in every group, and returns how long until it should be
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
		if d := g.trimIdle(now); d > 0 && (wait == 0 || d < wait) {
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
