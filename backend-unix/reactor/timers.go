//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import "github.com/blitz-go/blitz/backend"

// An op's Internal.State, guarded by Reactor.mu: bit 0 says the op is in
// flight (from an accepted Submit to its final completion); the bits above
// hold its timer-heap index plus one (zero: no timer armed).
const (
	stateInFlight = 1
	stateIdxShift = 1
)

func inFlight(op *backend.Op) bool { return op.Internal.State&stateInFlight != 0 }

// heapIndex returns op's index in the timer heap, or -1.
func heapIndex(op *backend.Op) int {
	return int(op.Internal.State>>stateIdxShift) - 1
}

func setHeapIndex(op *backend.Op, i int) {
	op.Internal.State = op.Internal.State&stateInFlight | uint64(i+1)<<stateIdxShift
}

// timer is one entry of the heap: op's deadline, in nanoseconds since the
// reactor's epoch.
type timer struct {
	when int64
	op   *backend.Op
}

// timerHeap is a binary min-heap of deadlines; every op in it knows its
// index (Internal.State), so removal is O(log n). Guarded by Reactor.mu.
type timerHeap []timer

func (h *timerHeap) push(op *backend.Op, when int64) {
	*h = append(*h, timer{when, op})
	i := len(*h) - 1
	setHeapIndex(op, i)
	h.up(i)
}

// remove takes out the entry at i and clears its op's index.
func (h *timerHeap) remove(i int) *backend.Op {
	s := *h
	op := s[i].op
	last := len(s) - 1
	if i != last {
		h.swap(i, last)
	}
	s[last] = timer{}
	*h = s[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	setHeapIndex(op, -1)
	return op
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	setHeapIndex(h[i].op, i)
	setHeapIndex(h[j].op, j)
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].when <= h[i].when {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts i down and reports whether it moved.
func (h timerHeap) down(i int) bool {
	start := i
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r].when < h[c].when {
			c = r
		}
		if h[i].when <= h[c].when {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i != start
}

// ring is the ready list: completions waiting for Wait, oldest first.
// Guarded by Reactor.mu. It grows by doubling and never shrinks.
type ring struct {
	buf  []backend.Completion
	head int
	n    int
}

func (r *ring) push(c backend.Completion) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = c
	r.n++
}

func (r *ring) grow() {
	size := 2 * len(r.buf)
	if size == 0 {
		size = 64
	}
	nb := make([]backend.Completion, size)
	for i := 0; i < r.n; i++ {
		nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = nb, 0
}

// pop moves up to len(out) completions into out, clearing their slots so
// that the ring keeps no op referenced.
func (r *ring) pop(out []backend.Completion) int {
	k := 0
	for k < len(out) && r.n > 0 {
		out[k] = r.buf[r.head]
		r.buf[r.head] = backend.Completion{}
		r.head = (r.head + 1) & (len(r.buf) - 1)
		r.n--
		k++
	}
	return k
}
