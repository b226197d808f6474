//go:build linux

package uring

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

var (
	errBufArgs  = errors.New("count must be a power of two in 1..32768, size in 1..1<<20")
	errNotHeld  = errors.New("buffer not held by the caller")
	errNoBuffer = errors.New("no such buffer")
)

// group is a buffer group: count buffers of size bytes in a
// backend.BufferArena (Go-heap chunks made as buffers are first given out,
// kept reachable here, so the kernel may write into any buffer it was
// given at any time), given to the kernel through a provided-buffer ring,
// through PROVIDE_BUFFERS requests, or kept in a free list for the
// emulation.
//
// The kernel takes buffers from a ring or a provided list in turn, so every
// buffer it was ever given ends up written, and resident, however few
// reads are in flight at once. A group therefore gives the kernel only its
// first few buffers (firstProvided) and doubles that number whenever fewer
// than a quarter of them are left with the kernel, or a receive found none:
// the memory a process holds and touches follows the most reads it had in
// flight, not count: the arena makes a chunk of buffers when a doubling
// first gives them out. The emulation takes buffers from the top of a
// stack, lowest ids first, and makes only the chunks it uses.
//
// A ring group also gives memory back when the reads in flight fall (after
// a burst of connections, say). A buffer the caller releases while the
// kernel holds keptWithKernel or more, and at least as many as the
// caller, is parked instead of going back to the ring. The pages of parked
// buffers are returned to the system (madvise MADV_DONTNEED: the memory
// stays mapped and reachable, and reads as zeros until written again) by
// TrimIdle, which a worker calls before it sleeps, once the group has not
// taken parked buffers back for trimAfter. A doubling gives the kernel
// parked buffers before new ones. The buffers already in the ring stay
// there, each written once, until the kernel takes them; so after a burst
// the group keeps resident what its ring holds then (down to
// keptWithKernel once later reads have taken those), not all it had at
// the peak.
type group struct {
	id          uint16
	count, size int
	mode        int
	mem         *backend.BufferArena

	// mu guards held, free, provided, withKernel, parked, trimmed,
	// unparkedAt, the ring's entries and tail, and dead. Lock order: the
	// backend's mu before it.
	mu   sync.Mutex
	held []bool   // buffers the caller holds (between a completion and ReleaseBuffer)
	free []uint16 // bufEmulate: buffers available to the emulated recv
	dead bool     // the backend is closed: the ring is unmapped

	// provided is how many buffers (ids 0 to provided-1) the kernel has
	// been given so far; withKernel how many of them it has now (given or
	// recycled, and not yet attached to a completion). bufRing and
	// bufProvide only.
	provided, withKernel int
	// parked holds the buffers taken out of circulation (bufRing only):
	// neither with the kernel nor held. parked[:trimmed] have had their
	// pages returned; the rest, parked since, have not yet (see trim).
	// The circulation is provided - len(parked).
	parked  []uint16
	trimmed int
	// unparkedAt is when the group last took parked buffers back: their
	// pages are returned only trimAfter after it (see TrimIdle).
	unparkedAt time.Time

	ringMem []byte    // bufRing: the mmap'd ring shared with the kernel
	ring    []ringBuf // entries over ringMem
	tail    uint16    // our copy of the ring's tail
	tailW   *uint32   // the 32-bit word holding the tail and entry 0's bid
}

// firstProvided is how many buffers a group gives the kernel at first
// (fewer if it has fewer): 64 buffers of 4 KiB are 256 KiB.
const firstProvided = 64

// smallGroupIDs is the number of group ids Backend.smallGroups holds.
const smallGroupIDs = 8

// group returns registered group id, or nil.
func (b *Backend) group(id uint16) *group {
	if id < smallGroupIDs {
		return b.smallGroups[id].Load() // load-acquire: pairs with RegisterBufferGroup's Store
	}
	b.groupsMu.RLock()
	g := b.groups[id]
	b.groupsMu.RUnlock()
	return g
}

// RegisterBufferGroup makes group id of count buffers of size bytes.
func (b *Backend) RegisterBufferGroup(id uint16, count, size int) error {
	if count < 1 || count > 32768 || count&(count-1) != 0 || size < 1 || size > 1<<20 {
		return backend.NewError("register buffer group", backend.ErrInvalid, errBufArgs)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return backend.ErrClosed
	}
	b.groupsMu.Lock()
	defer b.groupsMu.Unlock()
	if b.groups[id] != nil {
		return backend.NewError("register buffer group", backend.ErrExists, nil)
	}
	g := &group{id: id, count: count, size: size, mode: b.bufMode, mem: backend.NewBufferArena(count, size), held: make([]bool, count)}
	if g.mode == bufRing && g.registerRing(b.r.fd) != nil {
		g.mode = bufProvide // the kernel lacks rings after all
	}
	switch g.mode {
	case bufProvide:
		if err := b.reserve(1); err != nil {
			return err
		}
		g.provided = min(count, firstProvided)
		g.withKernel = g.provided
		b.provide(g, 0, g.provided)
		if err := b.r.submit(); err != nil {
			return err
		}
	case bufEmulate:
		g.free = make([]uint16, 0, count)
		for i := count - 1; i >= 0; i-- {
			g.free = append(g.free, uint16(i))
		}
	}
	b.groups[id] = g
	if id < smallGroupIDs {
		b.smallGroups[id].Store(g) // publishes g, set up above
	}
	return nil
}

// registerRing maps a buffer ring, registers it and fills it.
func (g *group) registerRing(ringFD int) error {
	size := g.count * int(unsafe.Sizeof(ringBuf{}))
	size = (size + unix.Getpagesize() - 1) &^ (unix.Getpagesize() - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	reg := bufReg{RingAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), RingEntries: uint32(g.count), Bgid: g.id}
	if errno := sysRegister(ringFD, registerPbufRing, unsafe.Pointer(&reg), 1); errno != 0 {
		unix.Munmap(mem)
		return errno
	}
	g.ringMem = mem
	g.ring = unsafe.Slice((*ringBuf)(unsafe.Pointer(&mem[0])), g.count)
	g.tailW = (*uint32)(unsafe.Pointer(&mem[12]))
	g.provided = min(g.count, firstProvided)
	g.withKernel = g.provided
	for i := 0; i < g.provided; i++ {
		g.ringAdd(uint16(i))
	}
	g.ringPublish()
	return nil
}

// taken records that the kernel attached a buffer to a completion, and
// gives it more buffers when it is running low. Called with g.mu held (and
// b.mu).
func (b *Backend) taken(g *group) {
	if g.mode == bufEmulate {
		return
	}
	g.withKernel--
	if g.withKernel < g.provided/4 {
		b.grow(g)
	}
}

// grow doubles the buffers in circulation (up to count), so that the
// pool follows the reads in flight: parked buffers first, then buffers the
// kernel never had. Called with g.mu held (and b.mu).
func (b *Backend) grow(g *group) {
	if g.dead || g.mode == bufEmulate {
		return
	}
	if len(g.parked) > 0 {
		g.unpark(max(g.provided-len(g.parked), 1))
		return
	}
	if g.provided == g.count {
		return
	}
	first := g.provided
	n := min(g.provided, g.count-g.provided)
	g.provided += n
	g.withKernel += n
	if g.mode == bufRing {
		for id := first; id < first+n; id++ {
			g.ringAdd(uint16(id))
		}
		g.ringPublish()
		return
	}
	if !b.fdsGone {
		b.provide(g, first, n)
	}
}

// unpark gives the ring back up to n parked buffers, the latest parked
// first (their pages are the likeliest to be still resident).
func (g *group) unpark(n int) {
	n = min(n, len(g.parked))
	for _, id := range g.parked[len(g.parked)-n:] {
		g.ringAdd(id)
	}
	g.parked = g.parked[:len(g.parked)-n]
	g.trimmed = min(g.trimmed, len(g.parked))
	g.withKernel += n
	g.ringPublish()
	g.unparkedAt = time.Now()
}

// trimAfter is how long a group must have gone without taking parked
// buffers back before TrimIdle returns their pages: under a load that
// rises and falls, buffers move between the ring and the parked stack
// without a system call or a page fault each time.
const trimAfter = 250 * time.Millisecond

// keptWithKernel is the fewest buffers a ring group parks down to: as
// many as it starts with, enough for the first reads of a new burst while
// the group takes parked buffers back (fewer made bursts find the ring
// empty, and reads fall back to buffers of their own).
const keptWithKernel = firstProvided

// shouldPark reports whether a buffer the caller releases should leave the
// circulation: the kernel holds keptWithKernel buffers or more, and at
// least as many as the caller. Called with g.mu held.
func (g *group) shouldPark() bool {
	if g.mode != bufRing {
		return false
	}
	held := g.provided - len(g.parked) - g.withKernel - 1 // the buffer being released is no longer held
	return g.withKernel >= keptWithKernel && g.withKernel >= held
}

// park takes buffer id out of the circulation; TrimIdle returns its pages
// later. Called with g.mu held.
func (b *Backend) park(g *group, id uint16) {
	g.parked = append(g.parked, id)
	b.untrimmed.Store(true) // after the append, under g.mu: see TrimIdle
}

var _ backend.Trimmer = (*Backend)(nil)

// TrimIdle returns the pages of the buffers parked since the last trim in
// every group that has not taken parked buffers back for trimAfter, drops
// the pages of the per-descriptor indexes that hold nothing any more, and
// returns how long until what must wait longer may go (0 if nothing
// waits); see backend.Trimmer. Any goroutine.
func (b *Backend) TrimIdle() time.Duration {
	wait := time.Duration(0)
	if b.pagesEmptied.Load() {
		wait = b.compactIndexes()
	}
	if b.untrimmed.Load() {
		if d := b.trimGroups(); d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	}
	return wait
}

// trimGroups is TrimIdle's work on the groups' parked buffers.
func (b *Backend) trimGroups() time.Duration {
	// Cleared before the groups are looked at: a park after this sets it
	// again, and one before it is seen below, under the group's mu.
	b.untrimmed.Store(false)
	var now time.Time
	wait := time.Duration(0)
	b.groupsMu.RLock()
	defer b.groupsMu.RUnlock()
	for _, g := range b.groups {
		g.mu.Lock()
		if len(g.parked) > g.trimmed && !g.dead {
			if now.IsZero() {
				now = time.Now()
			}
			if d := trimAfter - now.Sub(g.unparkedAt); d > 0 {
				if wait == 0 || d < wait {
					wait = d // the soonest group to wait for
				}
			} else {
				g.trim()
			}
		}
		g.mu.Unlock()
	}
	if wait > 0 {
		b.untrimmed.Store(true)
	}
	return wait
}

// compactIndexes drops the pages of the per-descriptor indexes that went
// back to all zeros, once trimAfter has passed since TrimIdle first saw
// one (so that a page emptied and refilled at every request is not made
// again each time), and returns how long until then (0 when done).
func (b *Backend) compactIndexes() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return 0
	}
	now := time.Now()
	if b.pagesEmptiedAt.IsZero() {
		b.pagesEmptiedAt = now
	}
	if d := trimAfter - now.Sub(b.pagesEmptiedAt); d > 0 {
		return d
	}
	b.pagesEmptied.Store(false) // under mu, as every set that stores true
	b.pagesEmptiedAt = time.Time{}
	b.fdHeads.compact()
	b.arms.byFD.compact()
	return 0
}

// trim returns the pages of the buffers parked since the last trim:
// MADV_DONTNEED on the whole pages inside each buffer. The memory stays
// mapped (a slice of it that a caller kept reads zeros or newer data, as
// after any release) and costs a page fault when the kernel writes it
// again. Called with g.mu held.
func (g *group) trim() {
	for _, id := range g.parked[g.trimmed:] {
		if err := unixio.ReleasePages(g.mem.Buffer(int(id))); err != nil {
			break // the pages stay resident: no harm beyond the memory
		}
	}
	g.trimmed = len(g.parked)
}

// starved gives group more buffers after a receive found none. Called
// with b.mu held.
func (b *Backend) starved(group uint16) {
	if g := b.group(group); g != nil {
		g.mu.Lock()
		b.grow(g)
		g.mu.Unlock()
	}
}

// ringAdd writes buffer id at the ring's tail (not yet visible).
func (g *group) ringAdd(id uint16) {
	e := &g.ring[int(g.tail)&(g.count-1)]
	e.Addr = uint64(uintptr(unsafe.Pointer(&g.mem.Buffer(int(id))[0])))
	e.Len = uint32(g.size)
	e.Bid = id
	g.tail++
}

// ringPublish makes the added entries visible to the kernel: a release
// store of the tail, paired with the kernel's acquire load of it when it
// picks a buffer. Go has no 16-bit atomics, so the store covers the 32-bit
// word of the tail and of entry 0's bid (which we own and rewrite as is).
func (g *group) ringPublish() {
	bid0 := uint32(g.ring[0].Bid)
	w := bid0 | uint32(g.tail)<<16
	if isBigEndian {
		w = bid0<<16 | uint32(g.tail)
	}
	atomic.StoreUint32(g.tailW, w)
}

// provide queues a PROVIDE_BUFFERS of buffers first..first+n-1. Called
// with b.mu held.
func (b *Backend) provide(g *group, first, n int) {
	s := b.pushInternal(token(tagProvide, 0, 0))
	s.Opcode = opProvideBuffers
	s.FD = int32(n)
	s.Addr = uint64(uintptr(unsafe.Pointer(&g.mem.Range(first, n)[0]))) // one chunk: see group
	s.Len = uint32(g.size)
	s.Off = uint64(first)
	s.BufIndex = g.id
}

// Buffer returns buffer id of group.
func (b *Backend) Buffer(group, id uint16) []byte {
	g := b.group(group)
	if g == nil || int(id) >= g.count {
		return nil
	}
	return g.mem.Buffer(int(id))
}

// ReleaseBuffer gives buffer id back to group.
func (b *Backend) ReleaseBuffer(group, id uint16) error {
	g := b.group(group)
	if g == nil || int(id) >= g.count {
		return backend.NewError("release buffer", backend.ErrInvalid, errNoBuffer)
	}
	if g.mode == bufProvide {
		b.mu.Lock() // provide queues an SQE
		defer b.mu.Unlock()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.held[id] {
		return backend.NewError("release buffer", backend.ErrInvalid, errNotHeld)
	}
	g.held[id] = false
	return b.recycle(g, id)
}

// recycle makes buffer id available again. Called with g.mu held (and
// b.mu in the provide mode).
func (b *Backend) recycle(g *group, id uint16) error {
	if g.dead {
		return nil
	}
	if g.shouldPark() {
		b.park(g, id)
		return nil
	}
	if g.mode != bufEmulate {
		g.withKernel++
	}
	switch g.mode {
	case bufRing:
		g.ringAdd(id)
		g.ringPublish()
	case bufProvide:
		if b.fdsGone {
			return nil
		}
		b.provide(g, int(id), 1)
		if b.pushesAtOnce() {
			return b.r.submit()
		}
	case bufEmulate:
		g.free = append(g.free, id)
	}
	return nil
}

// handOut records that the caller now holds buffer id. Called with b.mu.
func (b *Backend) handOut(group, id uint16) {
	if g := b.group(group); g != nil && int(id) < g.count {
		g.mu.Lock()
		g.held[id] = true
		b.taken(g)
		g.mu.Unlock()
	}
}

// putBack recycles a buffer the kernel attached to a completion that will
// not carry it (end of stream, an error). Called with b.mu.
func (b *Backend) putBack(group, id uint16) {
	if g := b.group(group); g != nil && int(id) < g.count {
		g.mu.Lock()
		b.taken(g)
		b.recycle(g, id)
		g.mu.Unlock()
	}
}

// readInto is the emulated selection: read from fd into a free buffer.
// ENOBUFS when none is free.
func (g *group) readInto(fd int) (int, uint16, syscall.Errno) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.free) == 0 {
		return 0, 0, unix.ENOBUFS
	}
	id := g.free[len(g.free)-1]
	for {
		n, err := unix.Read(fd, g.mem.Buffer(int(id)))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, 0, errnoOf(err)
		}
		if n > 0 {
			g.free = g.free[:len(g.free)-1]
		}
		return n, id, 0
	}
}

// releaseGroups unmaps the buffer rings (the ring is closed: the kernel
// has let go of them). The groups' memory stays for Buffer.
func (b *Backend) releaseGroups() {
	b.groupsMu.Lock()
	defer b.groupsMu.Unlock()
	for _, g := range b.groups {
		g.mu.Lock()
		g.dead = true
		if g.ringMem != nil {
			unix.Munmap(g.ringMem)
			g.ringMem, g.ring, g.tailW = nil, nil, nil
		}
		g.mu.Unlock()
	}
}
