package wsqueue

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
)

// The growable Chase-Lev deque, in the formulation of Lê, Pop, Cohen and
// Zappa Nardelli (PPoPP 2013): see the package doc, section "The Chase-Lev
// deque".

// maxDequeInitial caps the initial capacity hint of [NewDeque].
const maxDequeInitial = 1 << 30

// StealResult is the outcome of [DequeStealer.Steal].
type StealResult uint8

const (
	// StealEmpty: the deque was empty when looked at.
	StealEmpty StealResult = iota
	// StealSuccess: an item was taken.
	StealSuccess
	// StealRetry: the thief lost a race for the oldest item (to another
	// thief or to the owner's pop of the last item); the deque may still
	// hold items.
	StealRetry
)

// String returns "empty", "success" or "retry". Any goroutine may call it.
func (r StealResult) String() string {
	switch r {
	case StealEmpty:
		return "empty"
	case StealSuccess:
		return "success"
	case StealRetry:
		return "retry"
	}
	return fmt.Sprintf("StealResult(%d)", uint8(r))
}

// ring is one buffer of a deque. A ring is never written after the owner
// replaces it, and never freed while a thief may read it: the GC keeps it
// alive as long as a thief holds the pointer.
type ring[T any] struct {
	mask  int64
	slots []atomic.Pointer[T]
}

// newRing returns an empty ring of size slots (a power of two). Called by
// NewDeque and by the owner's grow.
func newRing[T any](size int64) *ring[T] {
	return &ring[T]{mask: size - 1, slots: make([]atomic.Pointer[T], size)}
}

// slot returns the slot of index i. Any goroutine may call it; what it may
// do with the slot is the protocol's business.
func (r *ring[T]) slot(i int64) *atomic.Pointer[T] { return &r.slots[i&r.mask] }

// deque is the state shared by one [DequeOwner] and its [DequeStealer]s.
type deque[T any] struct {
	_ pad
	// top is the index of the oldest item. Advanced only by CAS: by thieves
	// (Steal) and by the owner when it pops the last item. Read by all.
	top atomic.Int64
	_   pad
	// bottom is one past the newest item. Written only by the owner (Push,
	// Pop). Read by thieves.
	bottom atomic.Int64
	_      pad
	// buf is the current ring. Replaced only by the owner (grow); read by
	// thieves with load-acquire.
	buf atomic.Pointer[ring[T]]
	// hook is nil outside tests; see hook.go. Set before the deque is shared.
	hook func(hookPoint)
}

// at calls the test hook, if any, at point p. Called by the thief or owner
// that reached p.
func (d *deque[T]) at(p hookPoint) {
	if d.hook != nil {
		d.hook(p)
	}
}

// DequeOwner is the owner's handle on a Chase-Lev deque: it pushes and pops
// at the bottom (LIFO). It must be used by one goroutine at a time; handing it
// over needs a happens-before edge. The zero DequeOwner is not usable: use
// [NewDeque].
type DequeOwner[T any] struct {
	d *deque[T]
	// ring is the current buffer. Only the owner replaces d.buf, so its copy
	// is always current. Owner only.
	ring *ring[T]
	// topSeen is the top index from the owner's latest read of top; the real
	// top can only be ahead, so bottom-topSeen over-counts the items and
	// Push may trust it without reading top. Owner only.
	topSeen int64
	// [lo, hi) bounds the indices whose slots in ring may still hold a
	// pointer: hi is one past the highest index pushed, lo the lowest not yet
	// cleared. Consumers only read slots; the owner clears them in one sweep
	// when a pop finds the deque empty (see the package doc, section
	// "Garbage retention"). Owner only.
	lo, hi int64
}

// DequeStealer is the thieves' handle on a Chase-Lev deque: it steals the
// oldest item (FIFO). Any number of goroutines may use one concurrently.
type DequeStealer[T any] struct {
	d *deque[T]
}

// NewDeque returns the owner and stealer handles of a new, empty Chase-Lev
// deque. initialCapacity is a hint: values of 0 or less select
// [DefaultCapacity], others are rounded up to a power of two between 2 and
// 2^30. The deque grows, doubling, whenever a push finds it full; it never
// shrinks. Any goroutine may call it; the goroutine that uses the DequeOwner
// becomes the owner.
func NewDeque[T any](initialCapacity int) (*DequeOwner[T], *DequeStealer[T]) {
	d := &deque[T]{}
	r := newRing[T](dequeSize(initialCapacity))
	d.buf.Store(r) // initialization; published with the handles
	return &DequeOwner[T]{d: d, ring: r}, &DequeStealer[T]{d: d}
}

// dequeSize turns the capacity hint of NewDeque into a ring size. Pure; any
// goroutine may call it.
func dequeSize(hint int) int64 {
	switch {
	case hint <= 0:
		return DefaultCapacity
	case hint <= 2:
		return 2
	case hint >= maxDequeInitial:
		return maxDequeInitial
	}
	return 1 << bits.Len64(uint64(hint-1))
}

// Push adds item at the bottom, growing the buffer if it is full. A nil item
// panics with ErrNilItem. Called only by the owner.
func (o *DequeOwner[T]) Push(item *T) {
	if item == nil {
		panic(ErrNilItem)
	}
	d := o.d
	b := d.bottom.Load() // plain read of our own index; only the owner writes bottom
	if b-o.topSeen > o.ring.mask {
		o.topSeen = d.top.Load() // load-acquire; pairs with the thieves' top CAS: the slots below top are free
		if b-o.topSeen > o.ring.mask {
			o.grow(o.topSeen, b)
		}
	}
	o.ring.slot(b).Store(item) // write the free slot; published by the bottom store below
	d.bottom.Store(b + 1)      // store-release; pairs with the bottom load in Steal
	o.hi = max(o.hi, b+1)
}

// grow replaces the ring with one twice its size holding the items [t, b).
// The old ring is left as it is for thieves still reading it, and to the GC
// after them (see the package doc, section "Growth and reclamation").
// Called only by the owner.
func (o *DequeOwner[T]) grow(t, b int64) {
	old := o.ring
	r := newRing[T](2 * (old.mask + 1))
	for i := t; i < b; i++ {
		r.slot(i).Store(old.slot(i).Load()) // copy; published by the buf store below
	}
	o.d.buf.Store(r) // store-release; pairs with the buf load-acquire in Steal
	o.ring = r
	o.lo, o.hi = t, b // the new ring holds exactly [t, b)
}

// Pop removes and returns the newest item, or nil if the deque is empty.
// Called only by the owner.
func (o *DequeOwner[T]) Pop() *T {
	d := o.d
	b := d.bottom.Load() // plain read of our own index; only the owner writes bottom
	t := d.top.Load()    // load-acquire; pairs with the thieves' top CAS
	o.topSeen = t
	switch {
	case t >= b: // empty
		o.clearConsumed(b)
		return nil
	case t == b-1: // one item: take it as a thief would (package doc, section "The Chase-Lev deque")
		return o.popLast(t)
	}
	return o.popReserve(b - 1)
}

// popLast takes the only item, index t, by the thieves' own CAS on top,
// leaving bottom alone. Called only by the owner.
func (o *DequeOwner[T]) popLast(t int64) *T {
	item := o.ring.slot(t).Load()        // our own write; ours if the CAS below succeeds
	if !o.d.top.CompareAndSwap(t, t+1) { // CAS; races with the thieves' top CAS in Steal
		o.clearConsumed(t + 1) // a thief took it: top == bottom == t+1
		return nil
	}
	o.topSeen = t + 1
	return item
}

// popReserve is Lê et al.'s take: reserve index b by lowering bottom, then
// look at top; it is used when the owner saw two or more items.
// Called only by the owner.
func (o *DequeOwner[T]) popReserve(b int64) *T {
	d := o.d
	d.at(hookDequePopReserve)
	d.bottom.Store(b) // seq-cst store: reserve index b; with the top load below it is Lê et al.'s store-load fence, pairs with the bottom load in Steal
	t := d.top.Load() // seq-cst load, ordered after the bottom store (Go atomics are sequentially consistent)
	o.topSeen = t
	switch {
	case t < b: // two or more items: no thief can reach index b
		return o.ring.slot(b).Load() // ours; cleared later by clearConsumed
	case t > b: // thieves emptied it meanwhile
		d.bottom.Store(b + 1) // store; undo the reservation
		o.clearConsumed(b + 1)
		return nil
	}
	// The last item: race the thieves for it.
	item := o.ring.slot(b).Load()       // our own write; ours if the CAS below succeeds
	won := d.top.CompareAndSwap(t, t+1) // CAS; races with the thieves' top CAS in Steal
	d.bottom.Store(b + 1)               // store; empty either way (bottom == top)
	o.topSeen = t + 1
	if !won {
		o.clearConsumed(b + 1)
		return nil
	}
	return item
}

// clearConsumed nils the slots of the ring that may still hold consumed
// items, so that the deque keeps nothing reachable. It runs when Pop finds
// the deque empty, with top == bottom == b: no index is live, the owner is
// not pushing, and a thief that still reads a slot holds a stale top and its
// CAS will fail. Rings replaced by grow are never cleared: they become
// garbage once no thief holds them. Called only by the owner.
func (o *DequeOwner[T]) clearConsumed(b int64) {
	r := o.ring
	for i := max(o.lo, o.hi-(r.mask+1)); i < o.hi; i++ {
		r.slot(i).Store(nil) // no live index (see above); no partner
	}
	o.lo, o.hi = b, b
}

// Len returns the number of items. Called only by the owner.
func (o *DequeOwner[T]) Len() int {
	b := o.d.bottom.Load() // plain read of our own index
	t := o.d.top.Load()    // load-acquire; pairs with the top CAS
	return int(max(b-t, 0))
}

// IsEmpty reports whether [DequeOwner.Len] is zero. Called only by the owner.
func (o *DequeOwner[T]) IsEmpty() bool { return o.Len() == 0 }

// Capacity returns the current size of the buffer. Called only by the owner.
func (o *DequeOwner[T]) Capacity() int { return int(o.ring.mask + 1) }

// Steal takes the oldest item. It returns (item, StealSuccess), or (nil,
// StealEmpty) if the deque was empty, or (nil, StealRetry) if it lost a race
// for the item and should try again (or elsewhere). Any goroutine may call
// it.
func (s *DequeStealer[T]) Steal() (*T, StealResult) {
	d := s.d
	t := d.top.Load()    // load-acquire; pairs with other thieves' and the owner's top CAS
	b := d.bottom.Load() // seq-cst load after the top load (Lê et al.'s fence); pairs with the owner's bottom stores
	if t >= b {
		return nil, StealEmpty
	}
	r := d.buf.Load()        // load-acquire, after the bottom load; pairs with the buf store in grow: index t is in r or our CAS fails
	item := r.slot(t).Load() // may be stale; the CAS below decides whether it is ours
	d.at(hookDequeStealRead)
	if !d.top.CompareAndSwap(t, t+1) { // CAS; races with other thieves and the owner's last-item CAS in Pop
		return nil, StealRetry
	}
	if item == nil {
		panic(fmt.Errorf("%w: Steal took an empty slot", ErrInvariant))
	}
	return item, StealSuccess
}

// StealLoop is [DequeStealer.Steal] retried while it reports StealRetry,
// yielding the processor after the first few attempts. It returns nil only if
// the deque was seen empty. Any goroutine may call it.
func (s *DequeStealer[T]) StealLoop() *T {
	for attempt := 0; ; attempt++ {
		item, res := s.Steal()
		if res != StealRetry {
			return item
		}
		if attempt >= 4 {
			runtime.Gosched()
		}
	}
}

// Len returns a snapshot of the number of items; it may be stale as soon as
// it returns. Any goroutine may call it.
func (s *DequeStealer[T]) Len() int {
	t := s.d.top.Load()    // load-acquire; first, so that bottom is not older
	b := s.d.bottom.Load() // load-acquire; pairs with the owner's bottom stores
	return int(max(b-t, 0))
}

// IsEmpty reports whether [DequeStealer.Len] is zero. Any goroutine may call
// it.
func (s *DequeStealer[T]) IsEmpty() bool { return s.Len() == 0 }
