// Package wsqueue provides the work-stealing queues of blitz for Go: the
// bounded local run queue of a scheduler worker, and a growable Chase-Lev
// deque for fork-join. Both give roles as types: a constructor returns an
// owner handle, which alone pushes and pops, and a stealer handle, which any
// number of goroutines may use at once. The package imports only the
// standard library.
//
// An owner handle ([Owner], [DequeOwner]) is not safe for concurrent use: one
// goroutine at a time, and handing it to another goroutine needs a
// happens-before edge (a channel send, a mutex), as for any Go value that is
// not concurrency-safe. The zero values of the handles are not usable; use
// the constructors.
//
// Comments elsewhere in the package cite the sections below by name.
//
// # The local queue
//
// [New] returns the [Owner] and [Stealer] of a ring of [DefaultCapacity]
// (256) slots; [NewSize] takes another power of two. The owner pushes at the
// tail and pops at the head (FIFO). A stealer takes half of the items, oldest
// first, puts all but one into its own queue and runs the last
// ([Stealer.StealInto]). A push into a full queue moves the oldest half and
// the new item to an [Overflow], the global queue in a scheduler, in one
// call. This is the design of the run queue of Tokio's multi-threaded
// scheduler; the queue depends on the Overflow interface, not on a global
// queue, so tests substitute a slice.
//
// # The packed head
//
// The shared state is a ring of pointer slots, a uint32 tail written only by
// the owner, and a 64-bit head written only by CAS that packs two uint32
// indices, steal (high half) and real (low half). The slots are plain *T,
// not atomics: who may touch a slot is decided by head and tail alone (see
// "Memory ordering" and "Slots"). Indices wrap at
// 2^32 and a slot is index & (capacity-1). At every moment:
//
//   - [real, tail) are the items in the queue;
//   - [steal, real) are the items claimed by the one steal in progress
//     (none when steal == real);
//   - the other slots are free, and only the owner writes them; the free
//     space is capacity - (tail - steal), measured from steal, not real.
//
// # The local queue protocol
//
// Push (owner):
//
//  1. Read tail t. If t - steal < capacity, using the steal index of the
//     owner's last head read (steal only moves forward, so this over-counts
//     the used slots), write slot t, then store tail = t+1: the item is
//     published.
//  2. Otherwise reread head. If there is room after all, do step 1. If a
//     steal is in progress, hand the item alone to the overflow: the
//     stealer's completion will free its slots, and the owner may not claim
//     past a claim in progress.
//  3. Otherwise the queue is full with no steal in progress: CAS head from
//     (r, r) to (r+capacity/2, r+capacity/2). If it succeeds, the oldest half
//     is the owner's: hand it, then the item, to the overflow in one call. If
//     it fails, a stealer claimed first: go to step 2.
//
// Pop (owner):
//
//  1. Read tail t and head (s, r). If r == t the queue is empty: clear the
//     consumed slots (see "Garbage retention") and return nil.
//  2. CAS head to (r+1, r+1) if s == r, or to (s, r+1) if a steal is in
//     progress: the owner takes the item after the claimed ones and leaves the
//     claim alone. If the CAS fails, reread head and go to step 1.
//  3. Slot r is the owner's: return its item.
//
// StealInto(dst), by the goroutine that owns dst:
//
//  1. Claim. Read head (s, r); if s != r another steal is in progress:
//     return nil. Read tail t; take n = ceil((t-r)/2), at most the free space
//     of dst plus one; if n == 0 return nil. CAS head from (s, r) to
//     (s, r+n): real moves past the claimed items, steal stays, which marks the
//     steal in progress. If the CAS fails, reread head and repeat.
//  2. Copy. Read the n claimed slots, in order; write all but the last into
//     dst's free slots after its tail, where nobody else looks yet.
//  3. Complete. CAS head from (s, r') to (r', r'), r' being the current real
//     (the owner may have popped past the claim). If the CAS fails, reread
//     head and repeat (see "Termination of the completion").
//  4. Store dst's tail, publishing the n-1 items to dst's stealers, and
//     return the last item.
//
// # Memory ordering
//
// Every sync/atomic operation is sequentially consistent in Go, so no
// ordering can be too weak; the question becomes which happens-before edges
// the protocol needs, and every atomic call site names its edge in a trailing
// comment. There are four:
//
//  1. Publication. The owner writes slot i, then stores tail > i; a stealer
//     loads that tail before its claim and reads slot i after it. Whatever the
//     owner wrote into the item before Push is visible to the stealer.
//  2. Reuse. A stealer reads its claimed slots before its completion CAS;
//     the owner writes such a slot again only after a head load that shows
//     steal past it (directly, or through the cached steal index, which came
//     from such a load). A slot is never overwritten while being copied.
//  3. Exclusion. Every removal (owner pop, overflow claim, steal claim) is a
//     CAS on the one head word, so the order of those CASes gives each index
//     to exactly one party.
//  4. Destination. A stealer fills dst's slots, then stores dst's tail: edge
//     1 again, for dst's stealers.
//
// Where another language would ask which operations need acquire, release or
// acq_rel, Go gives at least that everywhere. Because the slots are plain
// memory, the race detector checks edges 1, 2 and 4 on every slot access of
// every test: a slot read or written without the edge is reported as a data
// race. (Publishing tail before writing the slot, tried as a deliberate
// mutation, fails the full-size stress and linearizability tests with DATA
// RACE reports.) The tests also write plain fields of each item before
// pushing it and in whoever takes it, so a missing edge 1 or a double take
// shows up on the items too (TestStolenItemsCarryThePushersWrites, the stress
// tests), and edge 2 is what TestClaimedSlotsStayOccupiedUntilStealCompletes
// checks. A stealer claims before it reads, never the other way round, so it
// never reads a slot it does not own, which is what lets the owner reuse
// slots as soon as steal passes them.
//
// # ABA and index wrap
//
// The indices are uint32 and wrap at 2^32. The code uses only their
// differences (tail-real, tail-steal), never their order, and the capacity is
// at most 2^31, so every difference is unambiguous, where a comparison such
// as real >= tail would break at the wrap. The tests start the indices just
// below 2^32 through the NewAt seam of export_test.go, so the wrap happens in
// the middle of TestIndicesWrapPast2To32, the model and fuzz tests, the
// stress tests and the linearizability tests.
//
// The CAS compares the whole 64-bit word, so a stealer with a stale view
// fails even when the queue has the same length as when it looked
// (TestClaimCASFailsAfterOwnerPopBetweenLoadAndCAS). The steal half removes
// the ABA that would otherwise matter most, the owner overwriting slots a
// stealer is still copying once the ring comes round to them: free space is
// measured from steal (TestClaimedSlotsStayOccupiedUntilStealCompletes).
//
// What remains: a claim CAS succeeds wrongly only if head holds exactly the
// value the stealer read, with steal == real, after having changed. The owner
// must then have advanced real by a nonzero multiple of 2^32 (over four
// billion pops and overflow claims) while that stealer was stalled between
// two instructions, and stopped on the same value: at a few nanoseconds per
// operation that is more than ten seconds of uninterrupted owner work during
// one stall, and then a 1 in 2^32 landing. We accept it, as Tokio does since
// it widened the halves to 32 bits (tokio-rs/tokio#5041). Two 16-bit halves
// in a uint32 would wrap after 65,536 operations, within reach of one
// descheduled thief: rejected. The completion CAS has no ABA: while steal !=
// real only the owner's pops move head, always forward and by less than the
// capacity. The deque's indices are int64 and never wrap in
// practice, and its rings are never reused, so it has no ABA either.
//
// # Steals in progress
//
// Owner pop during a steal: the claim moves real past the claimed items, so
// the owner's pop goes on with the items after them at once, by a CAS that
// changes real and leaves steal; it never waits for a stealer
// (TestOwnerPopsPastStealInProgress; TestOwnerNeverWaitsForStalledStealer
// runs 10,000 push/pop pairs while a stealer is stalled mid-steal). During the
// steal the owner cannot reuse the claimed slots, so a push can find the
// queue full while [Owner.Len] is small, and it cannot claim half for the
// overflow, whose CAS needs steal == real: the pushed item then goes to the
// overflow alone (TestClaimedSlotsStayOccupiedUntilStealCompletes). Other
// stealers see steal != real and return at once
// (TestSecondStealerBacksOffDuringSteal): one steal per victim at a time,
// and a scheduler's thief moves on to another victim.
//
// # Termination of the completion
//
// While a steal is in progress nothing but the owner's pops changes head:
// other stealers back off without writing, the overflow claim needs steal ==
// real, and a push writes only a free slot and tail. Each failed completion
// CAS is therefore caused by an owner pop, each pop advances real by one,
// and real cannot pass tail, which cannot pass steal + capacity while steal
// is frozen. So the completion retries at most capacity - n times:
// TestCompleteStealRetriesAreBoundedByOwnerPops forces the worst case, one
// pop before each attempt, and counts exactly capacity - n. The completion is
// wait-free. The claim loop is only lock-free: it retries while the owner's
// pops keep changing head, which can go on forever, but every retry means the
// owner made progress. Progress overall: Push is wait-free except for its
// overflow claim, which retries only after a stealer's claim; Pop and
// StealInto are lock-free.
//
// Why the owner never waits. A simpler protocol marks a steal by moving
// steal ahead of real and makes the owner's pop spin while steal != real.
// That makes the owner, the worker with the work, wait for a thief: if the
// thief goroutine is descheduled between its mark and its commit
// (preemption, a GC assist, a page fault, its thread losing the CPU), the
// owner spins, on a busy machine until Go's scheduler preempts it 10 ms
// later, and the queue is no longer lock-free. Nor may a completion give up
// when its CAS fails: after the copy that would duplicate or lose the copied
// items. Here the owner never waits and the completion never gives up.
//
// # The LIFO slot
//
// The LIFO slot belongs to the scheduler, not to this package. What it means
// here: stealers touch the ring only through the packed head. They read slots
// only inside a range they have claimed by a CAS on head, and write nothing
// of the victim but head (the owner clears consumed slots). Every removal,
// pop, overflow or steal, is one CAS on that one word, so each item has
// exactly one moment of removal and no two paths can reach it.
//
// A LIFO stack of several slots (four, say) beside the ring would be a second
// structure with its own top index and slots changed by separate atomic
// operations. If only the owner touches it, it is correct, but its tasks are
// invisible to stealers: four runnable tasks can starve behind one long poll
// instead of the one that Tokio's single slot risks. If anyone else takes
// from it (a stealer from the bottom, or a waker on another thread), the top
// index and a slot are two words with no common CAS: one party's store of the
// index undoes the other's, and items are lost or taken twice, whatever the
// memory orderings. TestSeedLIFOStackLosesItems plays one such interleaving,
// step by step, on such a stack. The invariant this queue keeps instead, and
// asks of the scheduler: one word decides every removal; a LIFO slot is a
// single atomic pointer (swapped in, swapped out) owned by the worker,
// outside the queue, and its task reaches stealers by being pushed into the
// queue. A push never writes head, so it cannot disturb a steal
// (TestPushDoesNotDisturbClaimInFlight).
//
// # The Chase-Lev deque
//
// [NewDeque] returns a [DequeOwner], which pushes and pops at the bottom
// (LIFO: depth-first and cache-warm for fork-join), and a [DequeStealer],
// whose [DequeStealer.Steal] takes from the top and reports [StealSuccess],
// [StealEmpty], or [StealRetry] when it lost a race; [DequeStealer.StealLoop]
// retries. The algorithm is the formulation of Lê, Pop, Cohen and Zappa
// Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models"
// (PPoPP 2013), proven correct for C11's memory model. Their code uses
// relaxed accesses, a seq_cst CAS, and two seq_cst fences: in take, between
// the store of bottom and the load of top; in steal, between the load of top
// and the load of bottom. Go's atomics are all sequentially consistent, which
// contains both fences: the owner's bottom store and its next top load cannot
// be reordered (on amd64 the store is an XCHG), and that is the fences' job.
//
//   - Push: read bottom b (own) and top t (cached; top only grows); if b - t
//     fills the ring, reread top and grow if still full; write slot b; store
//     bottom = b+1.
//   - Pop with two or more items is the paper's take: store bottom = b-1,
//     load top t; if t < b-1 the item is the owner's without a CAS; if t ==
//     b-1 it is the last one, and the owner races the thieves for it with a
//     CAS on top, then restores bottom; if t > b-1 the deque was emptied:
//     restore bottom.
//   - Pop with one item is our one change to the paper: the owner takes it
//     by the thieves' own CAS on top and leaves bottom alone. This is a
//     thief's steal run by the owner, whose view of bottom is exact, so the
//     paper's argument for steal covers it; it saves two sequentially
//     consistent stores in the push-then-pop of every join.
//   - Steal: load top t, then bottom b; if t >= b, StealEmpty. Load the ring
//     (after bottom, so that a ring replaced since still holds index t, or
//     the CAS below fails), read slot t, CAS top from t to t+1; if the CAS
//     fails, StealRetry.
//
// Tests: TestDequeMatchesReference and FuzzDeque against the reference,
// TestStressDequeExactlyOnceWithGrowth, TestDequeIsLinearizable, and the
// deterministic races of deque_test.go (the owner and a thief, or two
// thieves, for the last item; the reserving pop against two thieves).
//
// # Growth and reclamation
//
// A push that finds the ring full allocates one twice the size, copies the
// live items [top, bottom) and publishes it with an atomic store. The old
// ring is never written again, so a thief that loaded it before the swap
// still reads the right item there and lets its CAS decide
// (TestDequeThiefHoldingOldRingAcrossGrowth). In C or C++ the old ring is
// the classic reclamation problem: when may it be freed while some thief may
// still be reading it? (Hazard pointers, epochs, or a leak; Lê et al. leave
// it out of scope.) In Go the problem does not exist: the old ring is left to
// the garbage collector, which frees it once no thief holds a pointer to it.
// The deque never shrinks.
//
// # Garbage retention
//
// A slot that still points to a consumed item keeps the item, and all it
// references, alive; a buffered channel clears its slot on receive. Clearing
// on every pop would add a write to each pop and make every stealer write
// into its victim's ring (with atomic slots, measured at about 30% of
// BenchmarkLocalPushPop), so consumers only read slots, and the owner
// clears all consumed slots in one sweep when its pop finds the queue empty:
// for a scheduler worker, when it has run out of work anyway. Until then at
// most capacity consumed items stay reachable, each until its slot is reused.
// The sweep is safe: no index before steal is live, no slot at or after
// tail - capacity has been reused, and no stealer reads a slot it has not
// claimed. For the deque, a thief cannot clear the slot it stole (the owner
// may already have reused it, and a compare-and-clear would erase an item
// pushed twice), so the owner's sweep, when it finds the deque empty, covers
// thieves' steals too; replaced rings are never swept, they become garbage.
// The overflow batch is cleared after each PushOverflow call.
// (TestConsumedSlotsAreClearedWhenOwnerFindsQueueEmpty,
// TestDequeConsumedSlotsAreClearedWhenOwnerFindsDequeEmpty, and the model
// tests after draining.)
//
// # Slots
//
// A slot must never hide a pointer from the garbage collector in an integer,
// which atomic.Pointer[T] slots would guarantee. A plain *T slot keeps that
// promise too, and this queue uses one, because every slot access is already
// ordered by the head and tail atomics (edges 1, 2 and 4 above): a stealer
// reads a slot only after its claim CAS, which came after a tail load that
// saw the owner's write, and the owner rewrites a slot only after a head load
// that saw the stealer's completion. Atomic slots would add nothing to that
// order and cost an XCHG per push on amd64 (sync/atomic has no release-only
// store); plain slots also put every slot access under the race detector, as
// "Memory ordering" says. Measured on the development machine, interleaved
// runs of the two variants: BenchmarkLocalPushPop 6.4-8.2 ns with plain slots
// against 7.7-10.6 ns with atomic ones, BenchmarkStealContended 11.4-17.0 ns
// against 12.7-36.5 ns.
//
// The deque is different: its thief reads the slot before the CAS that
// decides whether the item is its own, while the owner may be rewriting that
// slot after a wrap (the paper's relaxed accesses), so its slots stay
// atomic.Pointer[T].
//
// # Cost
//
// A push/pop pair of the local queue is two atomic read-modify-writes on
// amd64: the tail store (an XCHG, sync/atomic having no release-only store)
// and the pop's CAS on head. The Go runtime's own run queue needs none for a
// push because it stores tail with a release store that only the runtime can
// use. BENCHMARKS.md at the root of the blitz repository has the
// side-by-side figures
// against a buffered channel and a mutex-protected deque, measured in one
// run.
//
// # Alternatives rejected
//
//   - A steal that marks itself and makes the owner spin until it
//     completes, and 16-bit index halves: see "Termination of the
//     completion" and "ABA and index wrap".
//   - Stealing one item per CAS with exponential backoff: steal-half moves up
//     to capacity/2 items for two CASes and gives the thief a local backlog,
//     as in Tokio and in Go's runqsteal.
//   - The Chase-Lev deque as the scheduler's local queue: its owner end is
//     LIFO (unfair to older tasks) and it grows without bound; the bounded
//     queue keeps each worker's backlog bounded and sends the excess where
//     every worker sees it. Fork-join wants the opposite, LIFO and a push
//     that never fails, so it gets the deque.
//   - Clearing slots on every pop: see "Garbage retention".
//   - atomic.Pointer slots for the local queue: see "Slots".
//   - A 128-bit CAS or tagged pointers: not expressible with sync/atomic, and
//     not needed.
//   - golang.org/x/sys/cpu.CacheLinePad: see the pad type in pad.go.
package wsqueue
