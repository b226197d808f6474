// Package syncprim provides the async synchronization primitives of blitz
// for Go: Semaphore, Mutex, RwLock, Barrier, Notify and OnceCell. They are
// built on the waiter list, Waker and Signal of package waker; comments in
// the package cite the sections below by name.
//
// # Three tiers
//
// Every primitive is used in one of three ways, and tasks and goroutines
// may mix them on one primitive, queueing in one FIFO:
//
//   - TryX never waits, never registers anything and allocates nothing.
//   - X returns a new future (*LockFuture, *AcquireFuture, ...), a
//     future.Future and a future.Canceler, awaited as every future is:
//     g := future.Await(mu.Lock()). The waiter node lives inside it, and
//     the future is future.Movable: an async function's state machine, or a
//     hand-written future, holds it by value (f.lock = *mu.Lock()), so that
//     waiting allocates nothing. Do not copy a future after its first poll. Polling it after it completed panics with
//     future.ErrPolledAfterCompletion, after Cancel with
//     future.ErrPolledAfterCancel; Cancel is idempotent and allowed at any
//     time. Each future that completes consumes a unit of the polling
//     task's cooperative budget, and one that finds the budget spent yields
//     instead of taking the resource (see the future package, "The
//     cooperative budget"): tasks taking a free lock in a loop on one
//     worker take turns instead of one taking it for ever.
//   - XBlocking(ctx, ...) blocks an ordinary goroutine on a pooled
//     waker.Signal (no allocation in steady state). When ctx is done it
//     returns an error wrapping ctx.Err() and leaves no trace; a resource
//     that is free, or was handed to the goroutine before it gave up, wins
//     over a done ctx.
//
// # Semaphore
//
// A Semaphore is FIFO-fair with direct hand-off: released permits go
// straight to the queued waiters in order, so no waiter starves and no
// permit slips past the queue. Its state is one atomic word,
//
//	state = (available - bias) << 2 | closed bit | waiters bit
//
// where bias is 0 for a Semaphore (MaxReaders for an RwLock, so that its
// zero value is unlocked; see below), and a mutex guards the
// waiter list. The protocol:
//
//   - TryAcquire is one CAS that takes permits; it fails if the waiters bit
//     or the closed bit is set, so nobody barges past the queue.
//   - Release with the waiters bit clear is one CAS that adds permits. With
//     the bit set, it takes the lock and hands the permits to the waiters in
//     FIFO order; whatever is left over becomes free, and the bit is cleared
//     when the list empties. The woken waiters' Wakers run after the lock is
//     released (waker.WakeList).
//   - The slow path of an acquire takes the lock before its final CAS: if
//     enough permits are free and nobody is queued it takes them; otherwise,
//     in one CAS, it takes the free permits as a partial grant, sets free to
//     0 and sets the waiters bit, then queues. A releaser either sees the bit
//     (and takes the lock, so it finds the waiter queued) or its CAS came
//     first (and the acquirer's CAS fails and rereads the permits), so no
//     permit slips past the queue and no wakeup is lost.
//   - While the waiters bit is set the free count is 0 and every lock-free
//     writer backs off, so the state changes only under the lock. The head of
//     the queue accumulates the permits released to it (partial grants) until
//     it has what it asked for; a stream of small acquires cannot starve a
//     large one, and Available reports 0 while anyone is queued.
//   - A waiter that gives up (Cancel, a done ctx) leaves the list at once
//     under the lock. The permits it had accumulated go on to the next
//     waiters; if it had been granted everything but had not yet returned
//     (the hand-off race, "Unlinked means woken" in package waker), it
//     releases all of them. No permit is lost or counted twice.
//   - Close sets the closed bit, fails every queued acquire with ErrClosed
//     (their partial grants become free again) and every later acquire too.
//     Release keeps working; TryAcquire fails.
//
// Acquire(0) is ready at once; Acquire of a negative count completes with
// ErrInvalidPermits. Release of a negative count panics with
// ErrNegativePermits, as NewSemaphore does. Release also adds permits the
// semaphore never had, so it cannot catch a double release; the Permit
// tiers (TryAcquirePermit, AcquirePermit, AcquirePermitBlocking) return the
// permits as a Permit, checked like a read guard, whose second Release
// panics with ErrGuardReleased and adds nothing.
//
// # Mutex
//
// A Mutex has a state word of its own,
//
//	state = generation << 4 | handoff | woken | waiters | locked
//
// and a waiter list under a mutex, in which tasks and goroutines queue in
// FIFO order. The zero word is an unlocked Mutex with nobody queued, so
// the zero Mutex needs no initialization. Its policy is fair without
// paying a task switch for every contended lock:
//
//   - Locking is a CAS that sets locked when it is clear, whoever is
//     queued: a running task or goroutine that relocks may take the lock
//     before a queued waiter gets to run (it barges). TryLock is that CAS.
//   - Unlock with nobody queued, or with a woken waiter already on its way,
//     is one CAS that clears locked. With waiters queued and nobody woken,
//     it takes the first waiter off the list, sets woken and clears locked
//     in one CAS under the list's lock, and wakes that waiter: only one
//     waiter at a time is woken to compete.
//   - A woken waiter tries for the lock. If somebody barged in first, it
//     goes back to the front of the list and sets handoff, and the next
//     Unlock hands the lock straight to it: the lock stays locked, so
//     nobody can barge in between. So a waiter, once at the head of the
//     queue, loses at most one race: it is passed over only by the lockers
//     that get in between the unlock that woke it and its retry (for a
//     task, until its worker polls it; a task takes at most its
//     cooperative budget of locks in one poll). Waiters behind it keep
//     their order. No waiter starves.
//   - A waiter that gives up (Cancel, a done ctx) leaves the list at once.
//     If it had been woken, the wake passes on to the next waiter (or to
//     the holder's Unlock); if it had been handed the lock, it unlocks.
//
// Compared with a strict hand-off at every unlock (what the Semaphore and
// the RwLock do), this lets a task that locks and unlocks in a loop keep the lock
// for the rest of its poll while others wait, instead of switching tasks
// at every lock; compared with sync.Mutex, whose starvation mode begins
// after a waiter has waited 1 ms, the hand-off here begins after the first
// lost race.
//
// A MutexGuard knows which acquisition it belongs to: the generation counts
// the unlocks, a guard carries the generation at its acquisition, and
// Unlock's CAS expects it. So a second Unlock, through the guard or a copy
// of it, finds the generation moved on and panics with ErrGuardReleased,
// and cannot release a later holder's lock; the zero MutexGuard panics with
// ErrNotLocked. An uncontended lock and unlock are a Load and a CAS each.
//
// # RwLock
//
// An RwLock is the semaphore core with MaxReaders permits, Tokio's design: a
// reader takes 1, a writer takes all MaxReaders; the core stores
// available-MaxReaders so that the zero RwLock is unlocked. The policy is a
// FIFO-fair phase order that falls out of the semaphore's queue:
//
//   - A waiting writer blocks readers that arrive after it (TryRLock fails
//     and RLock queues behind it), so a continuous stream of overlapping
//     readers cannot starve a writer: the writer, once at the head, gathers
//     the permits of the departing readers.
//   - Readers queued before a writer get in before it, together, so a stream
//     of writers cannot starve readers.
//
// WriteGuard.Downgrade releases MaxReaders-1 permits in one step: the lock
// is never free in between, and the readers at the head of the queue are
// admitted at once. A WriteGuard is checked as a MutexGuard is, with a
// count of write releases. Readers hold the lock together, so each read
// acquisition takes a token of its own from a sync.Pool (no allocation in
// steady state) and releases it with a CAS; either way a second release of
// a guard, through the guard or a copy of it, panics with ErrGuardReleased
// and leaves the other holders' hold alone.
//
// # Barrier
//
// A [Barrier] for n parties is reusable round after round. Each arrival
// (Wait's future, WaitBlocking, or TryWait, which arrives only if it
// completes the round) locks, counts itself and queues its Waiter,
// recording the round's generation, or, as the n-th arrival, becomes the
// round's one leader: it resets the count, unlinks every queued waiter into a
// waker.WakeList, stores generation+1 and wakes them after unlocking. A
// waiter of round g is released only by the leader of g ("Unlinked means
// woken" in package waker); the generation is an atomic stored after the
// unlinks, so a woken waiter that sees it moved knows it was released without
// taking the lock. Cancelling before the round completes withdraws the
// arrival (the Waiter leaves the list, the count drops); afterwards cancel is
// a no-op, because the round happened.
//
// # Notify
//
// [Notify] has Tokio's semantics. An atomic word holds a mode (empty,
// waiting, one permit stored) and the count of NotifyWaiters calls. With
// nobody waiting, NotifyOne and TryNotified are a single CAS (no lock, no
// allocation); permits do not accumulate beyond one. Every transition into or
// out of "waiting" happens under the mutex that guards the waiter list, so
// checking and queueing is one critical section. NotifyOne hands its
// notification to the front waiter by unlinking and marking it; a waiter
// cancelled (or whose ctx ends) before it returned ready passes the
// notification on to the next waiter or into the permit, so none is lost or
// doubled (a notification passed on while a permit is already stored merges
// into that one permit, as permits never exceed one). NotifyWaiters wakes
// exactly the waiters present, outside the lock through a WakeList, and
// stores no permit. A NotifiedFuture records the generation when it is made,
// so "make the future, check the condition, await" cannot miss a
// NotifyWaiters that lands before the first poll.
//
// # OnceCell
//
// A [OnceCell] follows UNINITIALIZED --CAS--> INITIALIZING --set-->
// INITIALIZED; Get is one atomic load. Exactly one caller at a time owns the
// right to initialize: it calls its own init (only the owner's init is ever
// called) and polls or runs it, while others queue in the waiter list (tasks
// and goroutines in one FIFO) under the mutex that guards every transition
// out of INITIALIZING. Success publishes the value and wakes every waiter
// with it. Failure (an error, a panic, the owning future cancelled, which
// cancels its init future, a blocking owner whose init fails) passes the
// right to the first waiter, which then calls its own init, or, with nobody
// waiting, returns the cell to UNINITIALIZED. A waiter handed the right and
// cancelled before using it passes it on the same way. Set fails with
// ErrInitializing while an initializer runs and ErrAlreadySet afterwards.
//
// # Blocking waiters
//
// A goroutine's waiter node escapes to the heap (the list keeps its
// address), so the blocking tier takes its node and its waker.Signal from
// sync.Pools: a blocking wait allocates nothing in steady state.
//
// # Task dumps
//
// A future that returns not-ready records what its task waits on, for a
// task dump (future.Context.Waiting), and names the primitive by a number
// it takes at its first wait by a task: "Mutex.Lock 3", "RwLock.RLock 4"
// and "RwLock.Lock 4" (one lock), "Semaphore.Acquire 5 (2 permits)" (the
// permits it asks for), "Notify.Notified 6", "Barrier.Wait 7",
// "OnceCell.Init 8". The numbers come from one counter, so no two
// primitives share one; a primitive no task waited on has none, and taking
// one costs nothing on the paths that do not wait. A lock's wait also tells
// which task holds it, so a dump can show a deadlock. The task that
// initializes a OnceCell shows the wait of its init future instead.
package syncprim
