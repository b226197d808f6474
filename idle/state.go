package idle

import (
	"fmt"
	"sync/atomic"
	"time"
)

// MaxWorkers is the largest worker count [New] accepts. The counts are
// packed as two 32-bit halves of one word, and 2*searching must not overflow
// an int on 32-bit platforms; 2^24 workers is far beyond any machine.
const MaxWorkers = 1 << 24

// counts packs the two counters of "The counts word": searching in the low
// 32 bits, parked in the high 32 bits.
type counts uint64

const (
	searchingOne = 1       // one searcher, added to a counts word
	parkedOne    = 1 << 32 // one parked worker, added to a counts word
	halfMask     = 1<<32 - 1

	minusSearching = ^uint64(searchingOne - 1) // added to a counts word: one searcher fewer
	minusParked    = ^uint64(parkedOne - 1)    // added to a counts word: one parked worker fewer
)

// searching returns the number of searchers in c.
func (c counts) searching() int { return int(uint64(c) & halfMask) }

// parked returns the number of announced, unclaimed workers in c.
func (c counts) parked() int { return int(uint64(c) >> 32) }

// wake is the kind of token a claimer sends to a claimed worker.
type wake uint8

const (
	wakeNotify wake = 1 + iota // claimed by NotifyOne: the worker is now a searcher
	wakeClose                  // claimed by Close
)

// worker is the per-worker part of a State.
type worker struct {
	// token carries at most one wake token (capacity 1). Sent by the one
	// claimer that cleared the worker's parked bit (NotifyOne or Close),
	// after the clear; received only by the worker itself, in Park. See
	// "Tokens" in the package doc.
	token chan wake
	// timer is the worker's park timer, created on its first timed Park and
	// reused. Owner only (Park).
	timer *time.Timer
	// announced is true between the worker's PrepareToPark and its Park.
	// Owner only; it catches misuse, never shared.
	announced bool
	_         pad
}

// State is the idle coordination of a fixed set of n workers, numbered 0 to
// n-1: the searching and parked counts, the parked-worker bitmap, and a wake
// token per worker. See the package documentation for the protocol. Create
// one with [New]; the zero State is not usable. All methods are safe for
// concurrent use, but each worker id must be driven by one goroutine at a
// time (PrepareToPark and Park of worker i are that worker's own calls).
type State struct {
	_ pad
	// word is the counts word (see "The counts word"): searching and parked.
	// Written by atomic CAS or Add in TryBecomeSearcher,
	// TransitionFromSearching, PrepareToPark (the worker), NotifyOne and
	// Close (claimers), and Park (a worker cancelling its own announcement).
	// Read by atomic load in the same places, first of all in NotifyOne's
	// fast path.
	word atomic.Uint64
	_    pad
	// bitmap has bit i%64 of word i/64 set while worker i is announced and
	// unclaimed. Set only by worker i (PrepareToPark, atomic Or); cleared by
	// exactly one party, whichever clears it first: a claimer (NotifyOne by
	// CAS, Close by Swap) or worker i itself (Park's cancel, atomic And).
	// The slice header is immutable.
	bitmap []atomic.Uint64
	// closed is set once by Close (atomic store) and read by Park (atomic
	// load), and by Close itself to stay idempotent.
	closed atomic.Bool
	// workers holds per-worker tokens and timers. The slice header is
	// immutable.
	workers []worker
	// n is the worker count. Immutable.
	n int
	// unparker, if set, is called by send after each token (see
	// SetUnparker). Written once before the workers start; read-only after.
	unparker func(id int)
}

// New returns the idle state of n workers, all running and none searching.
// It panics with [ErrWorkerCount] unless 1 <= n <= [MaxWorkers]. Any
// goroutine may call it.
func New(n int) *State {
	if n < 1 || n > MaxWorkers {
		panic(fmt.Errorf("%w: %d", ErrWorkerCount, n))
	}
	s := &State{
		bitmap:  make([]atomic.Uint64, (n+63)/64),
		workers: make([]worker, n),
		n:       n,
	}
	for i := range s.workers {
		s.workers[i].token = make(chan wake, 1)
	}
	return s
}

// Workers returns the worker count n. Any goroutine may call it.
func (s *State) Workers() int { return s.n }

// Searching returns the number of searchers at the moment of the call. Any
// goroutine may call it; the value may be stale at once.
func (s *State) Searching() int {
	return counts(s.word.Load()).searching() // load: a snapshot, no edge needed
}

// Parked returns the number of workers announced as parked and not yet
// claimed or cancelled, at the moment of the call. It may briefly exceed the
// number of parked bits set (see "The counts word"). Any goroutine may call
// it; the value may be stale at once.
func (s *State) Parked() int {
	return counts(s.word.Load()).parked() // load: a snapshot, no edge needed
}

// IsParked reports whether worker id's parked bit is set: announced, and not
// yet claimed or cancelled. Any goroutine may call it; the value may be stale
// at once.
func (s *State) IsParked(id int) bool {
	s.checkID(id)
	return s.bitmap[id>>6].Load()&(1<<(id&63)) != 0 // load: a snapshot, no edge needed
}

// Closed reports whether Close has been called. Any goroutine may call it.
func (s *State) Closed() bool {
	return s.closed.Load() // load: pairs with Close's Swap
}

// String describes the counts and the parked bits, for diagnostics. Any
// goroutine may call it; the parts are read one after another, not as one
// snapshot.
func (s *State) String() string {
	c := counts(s.word.Load()) // load: a snapshot for diagnostics
	var ids []int
	for wi := range s.bitmap {
		w := s.bitmap[wi].Load() // load: a snapshot for diagnostics
		for w != 0 {
			b := trailingZeros(w)
			w &= w - 1
			ids = append(ids, wi*64+b)
		}
	}
	return fmt.Sprintf("idle.State{workers: %d, searching: %d, parked: %d, parked bits: %v, closed: %v}",
		s.n, c.searching(), c.parked(), ids, s.closed.Load())
}

// checkID panics with ErrWorkerID unless 0 <= id < n.
func (s *State) checkID(id int) {
	if uint(id) >= uint(s.n) {
		panic(fmt.Errorf("%w: %d not in [0, %d)", ErrWorkerID, id, s.n))
	}
}
