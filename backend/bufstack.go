package backend

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// BufferStack is a buffer group for a backend that picks the buffer of a
// read itself, when the data is there (a readiness backend, or IOCP after
// a zero-byte receive): count buffers of size bytes in a BufferArena, and
// a free list whose top is the lowest id, so that the memory follows the
// most buffers in use at once.
//
// After a burst the buffers it needed go back to the free list, written and
// resident. The stack gives their pages back once they have stayed unused
// for a while (TrimIdle, which a worker calls before it sleeps): the list
// is a stack, so the buffers below the lowest point it reached during a
// window of BufferTrimAfter were not taken in that window, and those
// beyond the BufferTrimKeep on top are released (the release function
// given to NewBufferStack). Released buffers stay on the list, below the
// others, and cost a page fault when taken again. Under a steady load the
// window's lowest point follows the buffers in use, and nothing is
// released.
//
// Any goroutine may call its methods.
type BufferStack struct {
	mem *BufferArena // immutable
	// release gives back the pages inside a range of free buffers; any
	// partial page at either end stays. Immutable.
	release func([]byte)
	// pending is the backend's flag that some stack may have buffers to
	// release: set by Put, cleared by the backend before it calls
	// TrimIdle. Immutable pointer.
	pending *atomic.Bool

	// mu guards free, held, clean, low and windowAt.
	mu   sync.Mutex
	free []uint16 // stack of free buffer ids
	held []bool   // held[id]: taken, not yet put back
	// clean is how many buffers at the bottom of the stack hold no
	// resident pages: never taken, or released since. free[:clean] are
	// those: Put adds on top, and a Take that reaches into them lowers it.
	clean int
	// low is the fewest free buffers since windowAt: free[:low] were not
	// taken since then. windowAt is zero while no window runs.
	low      int
	windowAt time.Time
}

// BufferTrimAfter is how long free buffers must go untaken before a
// BufferStack gives their pages back: under a load that rises and falls,
// buffers come and go without a system call or a page fault each time.
const BufferTrimAfter = 250 * time.Millisecond

// BufferTrimKeep is how many free buffers a BufferStack keeps resident on
// top of its stack, for the first reads of the next burst.
const BufferTrimKeep = 16

// NewBufferStack returns the stack of count buffers (a power of two, 1 to
// 32768, as RegisterBufferGroup checks) of size bytes, with the arena's
// first chunk made (released: it holds no resident pages until written).
// release gives back the whole pages inside the memory it is passed (a
// system's madvise or its equivalent); it is called with the chunks the
// arena makes, before any of their buffers is handed out (see
// BufferArena.SetFreshChunk), and with runs of free buffers by TrimIdle.
// pending is the backend's flag that some stack has buffers to release
// (see Put).
func NewBufferStack(count, size int, pending *atomic.Bool, release func([]byte)) *BufferStack {
	s := &BufferStack{
		mem:     NewBufferArena(count, size),
		release: release,
		pending: pending,
		free:    make([]uint16, count),
		held:    make([]bool, count),
		clean:   count,
	}
	s.mem.SetFreshChunk(release)
	s.mem.Buffer(0) // the first chunk, for the first reads, as a ring hands the kernel its first buffers at once
	for i := range s.free {
		s.free[i] = uint16(count - 1 - i) // id 0 on top
	}
	return s
}

// Count is the number of buffers of the stack, made or not.
func (s *BufferStack) Count() int { return len(s.held) }

// Buffer returns buffer id (made on first use), or nil if id is not below
// Count.
func (s *BufferStack) Buffer(id uint16) []byte {
	if int(id) >= len(s.held) {
		return nil
	}
	return s.mem.Buffer(int(id))
}

// Take pops a free buffer; ok is false when every buffer is held.
func (s *BufferStack) Take() (id uint16, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.free) - 1
	if n < 0 {
		return 0, false
	}
	id = s.free[n]
	s.free = s.free[:n]
	s.held[id] = true
	s.clean = min(s.clean, n)
	s.low = min(s.low, n)
	return id, true
}

// Put gives id back; it reports false when id was not held. When more than
// BufferTrimKeep free buffers may hold pages, it sets the pending flag.
func (s *BufferStack) Put(id uint16) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if int(id) >= len(s.held) || !s.held[id] {
		return false
	}
	s.held[id] = false
	s.free = append(s.free, id)
	if len(s.free)-s.clean > BufferTrimKeep && !s.pending.Load() { // load: the flag is mostly set already
		s.pending.Store(true) // store: after the append, under mu; the backend clears it before TrimIdle looks
	}
	return true
}

// TrimIdle releases the free buffers that were not taken during the window
// that ended at now, if it has; it reports how long until the current
// window ends, 0 when the stack has nothing to release. The backend calls
// it with its clock, having cleared the pending flag, and sets the flag
// again if any stack answered more than 0.
func (s *BufferStack) TrimIdle(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.windowAt.IsZero() || len(s.free)-s.clean <= BufferTrimKeep {
		return s.nextWindow(now)
	}
	if d := BufferTrimAfter - now.Sub(s.windowAt); d > 0 {
		return d
	}
	if end := min(s.low, len(s.free)-BufferTrimKeep); end > s.clean {
		s.releaseIDs(s.free[s.clean:end])
		s.clean = end // also if a release failed: the pages stay, no harm beyond the memory
	}
	return s.nextWindow(now)
}

// nextWindow starts a window at now if the stack has more than
// BufferTrimKeep free buffers to release, and returns its length;
// otherwise it ends the window and returns 0. Called with s.mu held.
func (s *BufferStack) nextWindow(now time.Time) time.Duration {
	if len(s.free)-s.clean <= BufferTrimKeep {
		s.windowAt = time.Time{}
		return 0
	}
	s.windowAt, s.low = now, len(s.free)
	return BufferTrimAfter
}

// releaseIDs gives back the pages of the free buffers ids, in one call of
// release per run of consecutive ids within a chunk (after a burst most of
// the stack is such runs), so that the lock is held briefly and pages
// larger than a buffer are released too. Called with s.mu held.
func (s *BufferStack) releaseIDs(ids []uint16) {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for i := 0; i < len(sorted); {
		first, n := int(sorted[i]), 1
		for i+n < len(sorted) && int(sorted[i+n]) == first+n && s.mem.Contiguous(first, n+1) != nil {
			n++
		}
		if run := s.mem.Contiguous(first, n); run != nil { // nil: never made, nothing to release
			s.release(run)
		}
		i += n
	}
}

// FreeIDs returns the ids of the free buffers, the bottom of the stack
// first, and how many at the bottom hold no pages (never taken, or
// released since): a copy, for tests and diagnostics.
func (s *BufferStack) FreeIDs() (ids []uint16, clean int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.free), s.clean
}
