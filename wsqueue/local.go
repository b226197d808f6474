package wsqueue

import (
	"fmt"
	"sync/atomic"
)

// The bounded local run queue: construction, the owner's push and pop, and
// overflow. Stealing is in steal.go.

// DefaultCapacity is the number of slots [New] gives a local queue, as in
// Tokio.
const DefaultCapacity = 256

// maxCapacity bounds a local queue so that tail-steal, which is at most the
// capacity, never wraps a uint32 difference.
const maxCapacity = 1 << 31

// Overflow receives the items a full local queue moves out: half of the queue,
// oldest first, followed by the item being pushed, in one call (or the pushed
// item alone while a steal is in progress). In a scheduler it is the global
// injection queue; in tests a slice.
//
// PushOverflow must not retain batch: the owner reuses it. It is called from
// the owner's goroutine, during [Owner.Push] or [Owner.PushBatch].
type Overflow[T any] interface {
	PushOverflow(batch []*T)
}

// OverflowFunc adapts a function to [Overflow].
type OverflowFunc[T any] func(batch []*T)

// PushOverflow calls f(batch). The owner calls it, from Push or PushBatch.
func (f OverflowFunc[T]) PushOverflow(batch []*T) { f(batch) }

// queue is the state shared by one [Owner] and its [Stealer]s.
type queue[T any] struct {
	_ pad
	// head is the packed steal/real word (see [head]). Written only by CAS:
	// by the owner (Pop, the overflow claim in Push) and by stealers (claim
	// and completion in StealInto). Read by all of them.
	head atomic.Uint64
	_    pad
	// tail is one past the newest item. Written only by the owner (Push,
	// PushBatch, and StealInto when this queue is the destination, whose
	// caller is its owner). Read by stealers with load-acquire.
	tail atomic.Uint32
	_    pad
	// capacity is len(slots) and mask is capacity-1. Immutable.
	capacity uint32
	mask     uint32
	// slots is the ring. Slot i&mask is written only by the owner: with an
	// item while the slot is free (i-steal < capacity), and with nil when it
	// clears consumed slots. It is read by the one party whose CAS on head
	// removed index i: the owner (Pop, overflow) or a stealer (between its
	// claim and its completion). The slice header is immutable.
	//
	// The slots are plain pointers, not atomics: every access is ordered by
	// the head and tail atomics (see the package doc, section "Memory
	// ordering"), so the race detector checks that protocol on every slot
	// access, and a push costs one atomic store instead of two.
	slots []*T
	// hook is nil outside tests; see hook.go. Set before the queue is shared.
	hook func(hookPoint)
}

// at calls the test hook, if any, at point p. Called by the stealer that
// reached p.
func (q *queue[T]) at(p hookPoint) {
	if q.hook != nil {
		q.hook(p)
	}
}

// Owner is the owner's handle on a local queue: the only one that may push
// and pop. It must be used by one goroutine at a time; handing it to another
// goroutine needs a happens-before edge (a channel send, a mutex), as for any
// non-concurrent Go value. The zero Owner is not usable: use [New] or
// [NewSize].
//
// The owner-only fields sit between pads: the Owner is a small allocation of
// its own, and two workers' Owners allocated one after the other would
// otherwise share a cache line that both write at every push.
type Owner[T any] struct {
	_ pad
	q *queue[T]
	// stealSeen is the steal index from the owner's latest read of head. The
	// real steal index can only be ahead of it, so tail-stealSeen over-counts
	// the occupied slots and Push may trust it without reading head, which
	// stealers keep writing. Owner only.
	stealSeen uint32
	// dirty is the oldest consumed index whose slot may still hold the
	// item's pointer: consumers only read slots, and the owner clears the
	// consumed ones in one sweep when it finds the queue empty (see the
	// package doc, section "Garbage retention"). Owner only.
	dirty uint32
	// batch is the reusable overflow buffer, capacity/2+1 long. Owner only.
	batch []*T
	_     pad
}

// Stealer is the handle other goroutines use to steal from a local queue.
// Any number of goroutines may use one Stealer concurrently.
type Stealer[T any] struct {
	q *queue[T]
}

// New returns the owner and stealer handles of a new, empty local queue of
// [DefaultCapacity] slots. Any goroutine may call it; the goroutine that
// uses the Owner becomes the owner.
func New[T any]() (*Owner[T], *Stealer[T]) {
	return newQueue[T](DefaultCapacity, 0)
}

// NewSize is [New] with a chosen capacity, which must be a power of two
// between 2 and 2^31; otherwise the error wraps [ErrCapacity]. Any goroutine
// may call it.
func NewSize[T any](capacity int) (*Owner[T], *Stealer[T], error) {
	if err := checkCapacity(capacity); err != nil {
		return nil, nil, err
	}
	o, s := newQueue[T](uint32(capacity), 0)
	return o, s, nil
}

// checkCapacity validates a local queue capacity. Pure; any goroutine may
// call it.
func checkCapacity(capacity int) error {
	switch {
	case capacity < 2:
		return fmt.Errorf("%w: %d is below 2", ErrCapacity, capacity)
	case uint64(capacity) > maxCapacity:
		return fmt.Errorf("%w: %d is above 2^31", ErrCapacity, capacity)
	case capacity&(capacity-1) != 0:
		return fmt.Errorf("%w: %d is not a power of two", ErrCapacity, capacity)
	}
	return nil
}

// newQueue builds a queue whose indices all start at start (tests start them
// near 2^32 to exercise wrapping; see export_test.go). Any goroutine may call
// it.
func newQueue[T any](capacity, start uint32) (*Owner[T], *Stealer[T]) {
	q := &queue[T]{
		capacity: capacity,
		mask:     capacity - 1,
		slots:    make([]*T, capacity),
	}
	q.head.Store(uint64(packHead(start, start))) // initialization; published with the handles
	q.tail.Store(start)                          // initialization; published with the handles
	o := &Owner[T]{q: q, stealSeen: start, dirty: start, batch: make([]*T, 0, capacity/2+1)}
	return o, &Stealer[T]{q: q}
}

// Push appends item at the tail. If the queue is full it moves the oldest half
// of the queue and item to overflow in one PushOverflow call; if it is full
// only because a steal is in progress (whose completion will free slots), it
// hands item alone to overflow. overflow may be nil if the caller knows the
// queue has room; Push panics with ErrNilOverflow if it is then needed. A nil
// item panics with ErrNilItem.
// Called only by the owner.
func (o *Owner[T]) Push(item *T, overflow Overflow[T]) {
	q := o.q
	t := q.tail.Load() // plain read of our own index; only the owner writes tail
	if item == nil || t-o.stealSeen >= q.capacity {
		o.pushSlow(item, t, overflow)
		return
	}
	q.slots[t&q.mask] = item // a free slot; published by the tail store below
	q.tail.Store(t + 1)      // store-release; pairs with the tail load-acquire in claim
}

// pushSlow is Push when item is nil or the cached steal index says the queue
// is full; Push itself stays small enough to be inlined. Called only by the
// owner.
func (o *Owner[T]) pushSlow(item *T, t uint32, overflow Overflow[T]) {
	if item == nil {
		panic(ErrNilItem)
	}
	if !o.makeRoomSlow(item, t, overflow) {
		return // item went to overflow
	}
	q := o.q
	q.slots[t&q.mask] = item // a free slot; published by the tail store below
	q.tail.Store(t + 1)      // store-release; pairs with the tail load-acquire in claim
}

// makeRoomSlow runs when the cached steal index says the queue is full. It
// rereads head and reports true if slot t is in fact free; otherwise it moves
// items to overflow (item included) and reports false. Called only by the
// owner.
func (o *Owner[T]) makeRoomSlow(item *T, t uint32, overflow Overflow[T]) bool {
	q := o.q
	for {
		h := head(q.head.Load()) // load-acquire; pairs with a stealer's completion CAS, so its reads of the slots we reuse happen before our writes
		o.stealSeen = h.steal()
		if t-h.steal() < q.capacity {
			return true
		}
		if overflow == nil {
			panic(ErrNilOverflow)
		}
		if h.stealing() {
			// The stealer's completion will free slots; claiming half now
			// is impossible (the head is not ours to move past its claim).
			o.flush(overflow, append(o.batch, item))
			return false
		}
		if o.overflowHalf(item, h, t, overflow) {
			return false
		}
		// A stealer claimed first; the queue may no longer be full.
	}
}

// overflowHalf claims the oldest half of a full queue whose head is h (no
// steal in progress), and hands it with item to overflow. It reports false if
// a stealer moved head first. Called only by the owner.
func (o *Owner[T]) overflowHalf(item *T, h head, t uint32, overflow Overflow[T]) bool {
	q := o.q
	first := h.real()
	if t-first != q.capacity {
		panic(fmt.Errorf("%w: overflowHalf: queue not full (tail %d, head %d)", ErrInvariant, t, first))
	}
	half := q.capacity / 2
	end := first + half
	if !q.head.CompareAndSwap(uint64(h), uint64(packHead(end, end))) { // CAS; races with stealers' claim CAS for the same items
		return false
	}
	o.stealSeen = end
	batch := o.batch
	for i := first; i != end; i++ {
		batch = append(batch, q.slots[i&q.mask]) // ours since the CAS above
	}
	o.flush(overflow, append(batch, item))
	return true
}

// flush hands batch to overflow and clears the reusable buffer so that it
// keeps nothing reachable. Called only by the owner.
func (o *Owner[T]) flush(overflow Overflow[T], batch []*T) {
	overflow.PushOverflow(batch)
	clear(batch)
	o.batch = batch[:0]
}

// PushBatch pushes items in order, as if by one [Owner.Push] call each, but
// publishes each run of items that fits with a single tail store. It panics
// before pushing anything if an item is nil. Called only by the owner.
func (o *Owner[T]) PushBatch(items []*T, overflow Overflow[T]) {
	for _, it := range items {
		if it == nil {
			panic(ErrNilItem)
		}
	}
	q := o.q
	for len(items) > 0 {
		t := q.tail.Load() // plain read of our own index
		free := q.capacity - (t - o.stealSeen)
		if free == 0 {
			o.Push(items[0], overflow) // rereads head; overflows if really full
			items = items[1:]
			continue
		}
		n := min(uint32(len(items)), free)
		for i, it := range items[:n] {
			q.slots[(t+uint32(i))&q.mask] = it // free slots; published by the tail store below
		}
		q.tail.Store(t + n) // store-release; pairs with the tail load-acquire in claim
		items = items[n:]
	}
}

// Pop removes and returns the oldest item, or nil if the queue is empty. Items
// claimed by a steal in progress are no longer in the queue: Pop takes the
// ones after them without waiting for the stealer (see the package doc,
// section "Steals in progress"). Called only by the owner.
func (o *Owner[T]) Pop() *T {
	q := o.q
	t := q.tail.Load()       // plain read of our own index
	h := head(q.head.Load()) // load-acquire; pairs with the stealers' claim and completion CAS
	if r := h.real(); r != t && !h.stealing() &&
		q.head.CompareAndSwap(uint64(h), uint64(packHead(r+1, r+1))) { // CAS; races with the stealers' claim CAS for index r
		o.stealSeen = r + 1
		return q.slots[r&q.mask] // ours since the CAS; cleared later by clearConsumed
	}
	return o.popSlow(t, h)
}

// popSlow is Pop when the fast path of Pop, which is small enough to be
// inlined, did not take an item: the queue is empty, a steal is in progress,
// or a stealer won the CAS. h is the head Pop last read. Called only by the
// owner.
func (o *Owner[T]) popSlow(t uint32, h head) *T {
	q := o.q
	for {
		r := h.real()
		if r == t {
			o.clearConsumed(h.steal(), t)
			return nil
		}
		next := packHead(r+1, r+1)
		if h.stealing() {
			next = packHead(h.steal(), r+1) // leave the stealer's claim alone
		}
		if q.head.CompareAndSwap(uint64(h), uint64(next)) { // CAS; races with the stealers' claim CAS for index r
			o.stealSeen = next.steal()
			return q.slots[r&q.mask] // ours since the CAS; cleared later by clearConsumed
		}
		h = head(q.head.Load()) // load-acquire; as above, after losing to a stealer
	}
}

// clearConsumed nils the slots of the consumed indices [dirty, steal) that
// no push has reused, so that the ring keeps no popped or stolen item
// reachable. It runs when Pop finds the queue empty (real == tail): then no
// index before steal is live, no slot at or after tail-capacity has been
// reused, and no stealer reads a slot before steal (claims read only after
// their CAS, and a claim ends below steal only once it has completed).
// Called only by the owner.
func (o *Owner[T]) clearConsumed(steal, tail uint32) {
	q := o.q
	from := o.dirty
	if tail-from > q.capacity {
		from = tail - q.capacity // older slots were reused by later pushes
	}
	for i := from; i != steal; i++ {
		q.slots[i&q.mask] = nil // a free slot (see above)
	}
	o.dirty = steal
}

// Len returns the number of items in the queue, not counting items claimed by
// a steal in progress. Called only by the owner.
func (o *Owner[T]) Len() int {
	t := o.q.tail.Load()       // plain read of our own index
	h := head(o.q.head.Load()) // load-acquire; pairs with the stealers' CAS
	return int(t - h.real())
}

// Free returns how many items Push can take before it must overflow. Slots
// claimed by a steal in progress are not free until the stealer completes.
// Called only by the owner.
func (o *Owner[T]) Free() int {
	t := o.q.tail.Load()       // plain read of our own index
	h := head(o.q.head.Load()) // load-acquire; pairs with the stealers' completion CAS
	o.stealSeen = h.steal()
	return int(o.q.capacity - (t - h.steal()))
}

// IsEmpty reports whether [Owner.Len] is zero. Called only by the owner.
func (o *Owner[T]) IsEmpty() bool { return o.Len() == 0 }

// Capacity returns the number of slots. Any goroutine may call it.
func (o *Owner[T]) Capacity() int { return int(o.q.capacity) }

// Len returns a snapshot of the number of items in the queue; it may be stale
// as soon as it returns. Any goroutine may call it.
func (s *Stealer[T]) Len() int {
	q := s.q
	h := head(q.head.Load())                // load-acquire; first, so that the tail read after it is not older
	t := q.tail.Load()                      // load-acquire; pairs with the owner's tail store
	return int(min(t-h.real(), q.capacity)) // a torn pair may over-count; clamp
}

// IsEmpty reports whether [Stealer.Len] is zero. Any goroutine may call it.
func (s *Stealer[T]) IsEmpty() bool { return s.Len() == 0 }

// Capacity returns the number of slots. Any goroutine may call it.
func (s *Stealer[T]) Capacity() int { return int(s.q.capacity) }
