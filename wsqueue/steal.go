package wsqueue

import "fmt"

// Stealing half of a local queue: the three phases of the package doc's
// section "The local queue protocol".

// stealStatus is the outcome of a claim or a steal.
type stealStatus uint8

const (
	// stealTaken: items were claimed (and, for a steal, moved).
	stealTaken stealStatus = iota
	// stealEmpty: the queue was empty when looked at.
	stealEmpty
	// stealBusy: another stealer's steal was in progress; try another
	// victim or come back later.
	stealBusy
)

// StealInto steals half of the queue's items (rounded up), oldest first. It
// moves all but the last of them into dst, which must be the caller's own
// queue, and returns the last; it returns nil if the queue was empty or
// another steal from it was in progress. It takes no more than dst has room
// for plus the one it returns, so it never overflows dst. Stealing into the
// queue itself panics with ErrStealSelf.
//
// Any goroutine may call it, provided it owns dst.
func (s *Stealer[T]) StealInto(dst *Owner[T]) *T {
	item, _, _ := s.stealInto(dst)
	return item
}

// stealInto is StealInto reporting how many items it took (the returned one
// included) and why it took none. Any goroutine that owns dst may call it.
func (s *Stealer[T]) stealInto(dst *Owner[T]) (*T, uint32, stealStatus) {
	src := s.q
	if dst.q == src {
		panic(ErrStealSelf)
	}
	dq := dst.q
	dstTail := dq.tail.Load()  // plain read: the caller owns dst
	dh := head(dq.head.Load()) // load-acquire; pairs with dst's stealers' completion CAS: the slots we fill are free
	dst.stealSeen = dh.steal()
	room := dq.capacity - (dstTail - dh.steal())

	first, n, st := src.claim(room + 1)
	if st != stealTaken {
		return nil, 0, st
	}
	src.at(hookStealClaimed)

	// Phase 2: copy. The claimed slots are ours until the completion; dst's
	// slots past its tail are invisible to everyone else until the tail store.
	for i := range n - 1 {
		it := src.slots[(first+i)&src.mask] // our claimed slot; ordered after the owner's write by the tail load in claim
		dq.slots[(dstTail+i)&dq.mask] = it  // a free dst slot; published by dst's tail store below
	}
	last := src.slots[(first+n-1)&src.mask] // the one we return
	src.at(hookStealCopied)

	src.completeSteal(packHead(first, first+n))
	if n > 1 {
		dq.tail.Store(dstTail + n - 1) // store-release; pairs with the tail load-acquire of dst's stealers
	}
	return last, n, stealTaken
}

// claim is phase 1: it advances real by half of the available items (at most
// limit) and leaves steal where it was, which marks a steal in progress. It
// returns the first claimed index and the count. Any goroutine may call it.
func (q *queue[T]) claim(limit uint32) (first, n uint32, st stealStatus) {
	h := head(q.head.Load()) // load-acquire; pairs with the owner's Pop CAS and other stealers' completion CAS
	for {
		if h.stealing() {
			return 0, 0, stealBusy
		}
		t := q.tail.Load() // load-acquire; pairs with the owner's tail store in Push: the slots before t are written
		avail := t - h.real()
		if avail == 0 {
			return 0, 0, stealEmpty
		}
		if avail <= q.capacity { // otherwise head moved between our two loads: reload
			n = min(avail-avail/2, limit)
			q.at(hookStealLoaded)
			next := packHead(h.steal(), h.real()+n)
			if q.head.CompareAndSwap(uint64(h), uint64(next)) { // CAS; races with the owner's Pop and overflow CAS and other stealers' claims
				return h.real(), n, stealTaken
			}
		}
		h = head(q.head.Load()) // load-acquire; as above, after losing a race
	}
}

// completeSteal is phase 3: it moves steal up to real, ending the steal that
// installed mid. While a steal is in progress only the owner's Pop can move
// head (other stealers back off, overflow waits), and each pop only advances
// real, so every failed CAS is one owner pop, and there can be at most
// capacity-n of those before the queue is full as measured from steal. The
// loop thus ends after at most capacity-n retries (see the package doc,
// section "Termination of the completion"). Called only by the stealer that
// installed mid.
func (q *queue[T]) completeSteal(mid head) {
	h := mid
	for {
		done := packHead(h.real(), h.real())
		if q.head.CompareAndSwap(uint64(h), uint64(done)) { // CAS; release of our slot reads, pairs with the owner's head load in makeRoomSlow
			return
		}
		h = head(q.head.Load()) // load-acquire; the owner popped: pick up its new real
		if h.steal() != mid.steal() {
			panic(fmt.Errorf("%w: completeSteal: steal index moved from %d to %d during a steal", ErrInvariant, mid.steal(), h.steal()))
		}
		q.at(hookCompleteRetry)
	}
}
