package globalq

import (
	"sync/atomic"
)

// The sharded variant: an array of mutex queues, pushes spread round-robin,
// pops scanning from a rotating start.

// DefaultShards is the shard count [NewSharded] uses when given 0.
const DefaultShards = 8

// Sharded is a global queue split into independent mutex [Queue]s, each on
// its own cache lines, so that pushes and pops on different shards do not
// contend for one lock. It is FIFO per shard only: two elements pushed one
// after the other by one goroutine may come out in either order (see the
// package doc, "Ordering"). All methods are safe for concurrent use by any
// number of goroutines.
//
// The zero Sharded is not usable: use [NewSharded]. A Sharded must not be
// copied after first use.
type Sharded[E any, P Node[E]] struct {
	// shards are the queues. The slice header is immutable after
	// NewSharded; each shard guards itself.
	shards []Queue[E, P]
	_      pad
	// pushNext picks the shard of the next Push, PushSlice or PushOverflow.
	// Incremented with an atomic add by every push; its value orders nothing.
	pushNext atomic.Uint32
	_        pad
	// popNext picks the first shard the next Pop or PopBatch scans.
	// Incremented with an atomic add by every pop; its value orders nothing.
	popNext atomic.Uint32
	_       pad
}

// NewSharded returns an empty, open sharded queue of shards shards, or of
// [DefaultShards] if shards is 0. A negative count panics. Any goroutine may
// call it.
func NewSharded[E any, P Node[E]](shards int) *Sharded[E, P] {
	if shards == 0 {
		shards = DefaultShards
	}
	if shards < 1 {
		panic(msgShards)
	}
	return &Sharded[E, P]{shards: make([]Queue[E, P], shards)}
}

// Shards returns the shard count. Any goroutine may call it.
func (s *Sharded[E, P]) Shards() int { return len(s.shards) }

// pick returns the shard for counter value i. Any goroutine may call it.
func (s *Sharded[E, P]) pick(i uint32) *Queue[E, P] {
	return &s.shards[int(i%uint32(len(s.shards)))]
}

// Push appends e to the tail of the next shard in round-robin order, as
// [Queue.Push] does, including its answer after Close and its panics. Any
// goroutine may call it.
func (s *Sharded[E, P]) Push(e P) bool {
	return s.pick(s.pushNext.Add(1)).Push(e) // atomic add; orders nothing, only spreads
}

// PushHint appends e to shard hint mod Shards, as [Queue.Push] does. A caller
// that has a stable small number, such as its worker id, spreads pushes
// without touching the shared round-robin counter. Any goroutine may call it.
func (s *Sharded[E, P]) PushHint(hint uint, e P) bool {
	return s.shards[hint%uint(len(s.shards))].Push(e)
}

// PushSlice appends es, in order, to one shard, chosen round-robin, with one
// lock acquisition, as [Queue.PushSlice] does. Any goroutine may call it.
func (s *Sharded[E, P]) PushSlice(es []P) bool {
	return s.pick(s.pushNext.Add(1)).PushSlice(es) // atomic add; orders nothing, only spreads
}

// PushOverflow appends batch to one shard, chosen round-robin, as
// [Queue.PushOverflow] does: it satisfies wsqueue.Overflow[E] and accepts
// the batch even after Close. Any goroutine may call it.
func (s *Sharded[E, P]) PushOverflow(batch []*E) {
	s.pick(s.pushNext.Add(1)).PushOverflow(batch) // atomic add; orders nothing, only spreads
}

// Pop removes and returns the oldest element of the first non-empty shard,
// scanning all shards from a rotating start, or nil if every shard was empty
// when it looked (each look is a lock-free length load). Any goroutine may
// call it.
func (s *Sharded[E, P]) Pop() P {
	start := s.popNext.Add(1) // atomic add; orders nothing, only rotates the scan
	for i := range uint32(len(s.shards)) {
		if e := s.pick(start + i).Pop(); e != nil {
			return e
		}
	}
	return nil
}

// PopBatch takes a fair share, computed as in [Queue.PopBatch] from the total
// Len, into dst, from the shards in scan order (each shard's elements in its
// FIFO order), and returns how many it took. It may take fewer than the
// share if other goroutines pop concurrently. Any goroutine may call it.
func (s *Sharded[E, P]) PopBatch(dst []P, workers int) int {
	want := batchSize(s.Len(), workers, len(dst))
	if want == 0 {
		return 0
	}
	start := s.popNext.Add(1) // atomic add; orders nothing, only rotates the scan
	got := 0
	for i := range uint32(len(s.shards)) {
		got += s.pick(start + i).popUpTo(dst[got:want])
		if got == want {
			break
		}
	}
	return got
}

// popUpTo moves up to len(dst) of the oldest elements of q into dst, with no
// fair-share rule, and returns how many. Called by Sharded.PopBatch.
func (q *Queue[E, P]) popUpTo(dst []P) int {
	if len(dst) == 0 || q.length.Load() == 0 { // lock-free emptiness check; pairs with the Adds under mu
		return 0
	}
	q.mu.Lock()
	n := min(len(dst), int(q.length.Load())) // exact under mu
	q.popLocked(dst[:n])
	q.mu.Unlock()
	return n
}

// Drain drains every shard in turn, as [Queue.Drain] does, and returns the
// total. Any goroutine may call it.
func (s *Sharded[E, P]) Drain(f func(P)) int {
	n := 0
	for i := range s.shards {
		n += s.shards[i].Drain(f)
	}
	return n
}

// Close closes every shard, as [Queue.Close] does. A Push concurrent with
// Close may still be accepted by a shard not yet closed; once Close returns,
// every Push and PushSlice reports false, and a later Drain sees every
// accepted element. Any goroutine may call it.
func (s *Sharded[E, P]) Close() {
	for i := range s.shards {
		s.shards[i].Close()
	}
}

// Closed reports whether Close has returned (the last shard is closed).
// Lock-free. Any goroutine may call it.
func (s *Sharded[E, P]) Closed() bool {
	return s.shards[len(s.shards)-1].Closed()
}

// Len returns the sum of the shard lengths, each loaded without a lock. The
// loads are not one snapshot, so under concurrent pushes and pops the sum may
// be a total the queue never held at any one instant; it is never negative,
// and exact when no push or pop overlaps the call. Any goroutine may call it.
func (s *Sharded[E, P]) Len() int {
	n := 0
	for i := range s.shards {
		n += s.shards[i].Len()
	}
	return n
}

// IsEmpty reports whether every shard was empty when loaded. Lock-free. Any
// goroutine may call it.
func (s *Sharded[E, P]) IsEmpty() bool {
	for i := range s.shards {
		if !s.shards[i].IsEmpty() {
			return false
		}
	}
	return true
}
