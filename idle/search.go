package idle

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
)

// Searchers and the notify path: TryBecomeSearcher, TransitionFromSearching,
// NotifyOne, and the claim of a parked worker from the bitmap.

// TryBecomeSearcher makes the caller a searcher and returns true if fewer
// than half of the workers search (2*searching < n, so at most ceil(n/2)
// searchers); otherwise it returns false and the caller should park without
// searching (see "Searchers" in the package doc). A worker that returns from
// Park with [Notified] is already a searcher and must not call it. Called by
// a running, non-searching worker.
func (s *State) TryBecomeSearcher() bool {
	for {
		c := s.word.Load() // load: pairs with every CAS/Add on the counts word
		if 2*counts(c).searching() >= s.n {
			return false
		}
		if s.word.CompareAndSwap(c, c+searchingOne) { // CAS: rule 3, searchers are counted before they look
			return true
		}
	}
}

// TransitionFromSearching ends the caller's searching role because it found
// work. It returns true if the caller was the last searcher, in which case it
// has already called [State.NotifyOne] so that work the caller leaves behind
// is not stranded (rule 2 in "No lost wakeup"). It panics with
// [ErrNotSearching] if no searcher is counted. Called by a searching worker
// (one whose TryBecomeSearcher returned true, or whose Park returned
// [Notified]), once per searching role.
func (s *State) TransitionFromSearching() bool {
	for {
		c := s.word.Load() // load: pairs with every CAS/Add on the counts word
		if counts(c).searching() == 0 {
			panic(ErrNotSearching)
		}
		if s.word.CompareAndSwap(c, c-searchingOne) { // CAS: rule 2, the searcher leaves before it notifies
			if counts(c).searching() == 1 {
				s.NotifyOne()
				return true
			}
			return false
		}
	}
}

// NotifyOne wakes one parked worker as a searcher if nobody is searching and
// some worker is parked, and reports whether it woke one. When a searcher
// exists it costs one atomic load and does nothing: that searcher will find
// the work, or will be the last searcher and check again (see "No lost
// wakeup"). The caller must publish its work before calling NotifyOne (rule
// 1). Any goroutine may call it, inside or outside the workers.
func (s *State) NotifyOne() bool {
	for {
		c := s.word.Load() // load: rule 1, after the caller published its work; pairs with PrepareToPark's CAS
		if counts(c).searching() != 0 || counts(c).parked() == 0 {
			return false
		}
		if !s.word.CompareAndSwap(c, c+searchingOne) { // CAS: the woken worker's searcher slot, taken for it before the claim
			continue
		}
		if id, ok := s.claim(); ok {
			s.word.Add(minusParked) // add: after the bit clear, so parked never counts fewer than the set bits
			s.send(id, wakeNotify)
			return true
		}
		// Parked counted a worker whose bit is not set: one between its
		// announce and its bit set, or cancelling its own announcement
		// (see "The counts word"). Give the searcher slot back and look
		// again; the load at the top is this release's "last searcher"
		// check.
		s.word.Add(minusSearching) // add: we hold one searcher, so the low half cannot borrow
		runtime.Gosched()
	}
}

// claim clears one set bit of the bitmap and returns its worker id, or false
// if it saw no set bit. The scan starts at a random word (math/rand/v2's
// per-thread generator, no shared state) and wraps; within a word it takes
// the lowest set bit. Two claimers never get the same id: each bit is
// cleared by a CAS that expected it set. Called by NotifyOne while it holds a
// searcher slot.
func (s *State) claim() (int, bool) {
	nw := len(s.bitmap)
	start := 0
	if nw > 1 {
		start = rand.IntN(nw)
	}
	for i := range nw {
		wi := start + i
		if wi >= nw {
			wi -= nw
		}
		word := &s.bitmap[wi]
		for {
			old := word.Load() // load: pairs with PrepareToPark's Or
			if old == 0 {
				break
			}
			b := bits.TrailingZeros64(old)
			if word.CompareAndSwap(old, old&^(1<<b)) { // CAS: rule 4, the one clear of this bit; the worker's And or Close's Swap lose
				return wi*64 + b, true
			}
		}
	}
	return 0, false
}

// send puts a wake token of kind k into worker id's token channel. Called
// only by the party that cleared id's parked bit, which makes it the only
// sender for that announcement (see "Tokens").
func (s *State) send(id int, k wake) {
	select {
	case s.workers[id].token <- k: // send: pairs with Park's receive
	default:
		panic(fmt.Errorf("%w: worker %d already holds a wake token", errBroken, id))
	}
	if s.unparker != nil {
		s.unparker(id) // after the send: ParkWith looks at the token before it blocks
	}
}

// trailingZeros is bits.TrailingZeros64, named for the diagnostics in
// state.go.
func trailingZeros(w uint64) int { return bits.TrailingZeros64(w) }

// NotifyWorker wakes worker id as a searcher if it is parked, and reports
// whether it did. It is NotifyOne for work that only worker id can take (its
// own I/O ring, which no other worker waits on): it claims that worker
// whatever the searching count, so a woken worker may take the searchers
// past half the workers for the moment it needs to look. As for NotifyOne,
// the caller publishes its work first, and the worker checks for that work
// after it announced itself parked (rule 1 and rule 2 of "No lost wakeup",
// with worker id's own source in place of the shared ones). Any goroutine
// may call it. It panics with [ErrWorkerID] for a bad id.
func (s *State) NotifyWorker(id int) bool {
	s.checkID(id)
	mask := uint64(1) << (id & 63)
	word := &s.bitmap[id>>6]
	if word.Load()&mask == 0 { // load: pairs with PrepareToPark's Or; rule 1 after the caller published
		return false
	}
	s.word.Add(searchingOne) // add: rule 3, the woken worker's searcher slot, taken before the claim
	for {
		old := word.Load() // load: pairs with PrepareToPark's Or
		if old&mask == 0 {
			// Claimed, closed or cancelled meanwhile: the worker is awake.
			s.word.Add(minusSearching) // add: we hold one searcher, so the low half cannot borrow
			return false
		}
		if word.CompareAndSwap(old, old&^mask) { // CAS: rule 4, the one clear of this bit
			s.word.Add(minusParked) // add: after the bit clear, so parked never counts fewer than the set bits
			s.send(id, wakeNotify)
			return true
		}
	}
}
