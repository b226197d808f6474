// Package channels provides the channels of blitz for Go: a bounded MPMC
// channel ([Bounded]), an unbounded MPSC queue ([Unbounded]), and oneshot,
// broadcast and watch channels. The package imports only the standard
// library, waker and future.
//
// # Tiers
//
// Every channel offers three tiers, as every primitive of blitz:
//
//   - TryX: never waits, never registers anything, never allocates.
//   - X: returns a new future (*SendFuture, *RecvFuture, ...), a
//     future.Future and a future.Canceler, awaited as every future is:
//     v, err := future.Try(c.Recv()). The waker.Waiter lives in the future,
//     and the future is future.Movable: an async function's state machine,
//     or a hand-written future, holds it by value (f.recv = *c.Recv()), so
//     that waiting allocates nothing. Polling after completion or cancel panics with future's
//     sentinels; Cancel is idempotent and allowed at any time. Each future
//     that completes consumes a unit of the polling task's cooperative
//     budget, and one that finds the budget spent yields instead of taking
//     a value (see the future package, "The cooperative budget"): a task
//     receiving from a channel that stays full returns to its worker every
//     future.TaskBudget receives.
//   - XBlocking(ctx, ...): for ordinary goroutines, waiting on a pooled
//     waker.Signal in the same FIFO waiter list as the tasks.
//
// # Errors
//
// Everything a running program can meet is a returned error, compared with
// errors.Is: [ErrClosed], [ErrFull] (TrySend found no room), [ErrEmpty]
// (TryRecv found nothing yet). A synchronous send (TrySend, Unbounded.Send)
// returns the bare sentinel, allocation-free, since its caller still holds
// the value. A send that was handed the value and could not deliver it (a
// SendFuture, SendBlocking) returns a *[SendError] holding the value, with
// Err ErrClosed or the context's error: nothing sent is ever lost, each
// value is received exactly once or returned. A receive fails with
// ErrClosed only once the channel is closed AND everything sent before the
// close was received. A blocking call whose ctx ends returns an error
// wrapping ctx.Err(), after leaving no trace; a value or room available
// wins over a ctx already done. Misuse panics with a sentinel: [ErrCapacity]
// for a capacity below 1, [ErrConcurrentRecv] for two concurrent receives
// of one Unbounded.
//
// # Bounded
//
// The data path is Vyukov's bounded MPMC ring, lock-free: each slot has a
// sequence number, senders CAS the tail index and receivers the head index
// (each on its own cache line), and the slot's sequence store publishes the
// value (send) or frees the slot (receive). The sequence is kept doubled
// (2*pos free for the send at pos, 2*pos+1 full for the receive at pos) so
// that capacity 1 works: Vyukov's pos / pos+1 collide there.
//
// Close sets a closed bit in the tail index (as crossbeam's mark bit): a
// sender's CAS fails once it is set, so no send claims a slot after the
// close; receivers drain what was sent before and then see tail == head
// with the bit set, and report ErrClosed.
//
// Failures are linearizable. A plain Vyukov TryRecv can see "not written
// yet" at head while a later send has completed (an earlier-claimed slot is
// still being written); ours then loads tail too: tail == head is truly
// empty, anything else is a send in progress, which it waits for (spinning
// briefly, then runtime.Gosched). TrySend does the same with head for
// "full" versus a receive in progress. The package's tests check histories
// of every tier with a linearizability checker (porcupine) against a FIFO
// with a capacity and a closed flag. The
// waiting tiers need no such patience: after a few spins they treat an
// operation in progress as full or empty and register, and the operation
// in progress wakes them when it completes (the Dekker argument below).
// A blocking call yields the processor twice (runtime.Gosched) and retries
// before it parks: the other party is often about to act, and parking a
// goroutine costs several yields.
//
// Contention: a CAS lost on head or tail means another core has just moved
// the same index; retrying at once, the two cores pull the index's and the
// slots' cache lines back and forth at every operation. A task's future
// therefore changes nothing at the first CAS it loses and yields its task
// (future.Context.Yield), so that its worker runs another task, often one
// at the other end of the ring, in parallel with the other worker; the
// next poll retries as before. It yields so at most once per operation,
// and never in a poll that follows a wake (a woken waiter acts on the wake
// or registers again in the same poll, so that no wake is held by a future
// that is then cancelled); a future cancelled after such a yield took
// nothing, placed nothing and holds no wake. Goroutines (the blocking
// tier, TrySend, TryRecv) retry at once.
//
// A separate mutex guards only the two waiter lists (senders waiting for
// room, receivers waiting for a value); it is never taken on the data path
// unless a waiter count is non-zero. Waiters are told "look again", never
// handed a value: a value leaves the ring only in the poll that returns it,
// and a send places its value only in the poll that returns ready. No
// wakeup is lost, by Dekker's argument over Go's sequentially consistent
// atomics: a waiter, under the mutex, increments its side's count THEN
// rechecks the ring, and pushes itself only if the recheck fails; the other
// side completes its ring operation THEN loads the count and, if non-zero,
// takes the mutex and wakes the first waiter (outside the lock, or through
// the poll's Context.Wake so a task woken by a task runs next on the same
// worker). One of the two always sees the other. A waiter that was woken
// (unlinked) but is cancelled before acting on it (a lost select, a timeout)
// passes the wake to the next waiter of its list, so a value or a free slot
// never sits unseen while someone sleeps. A woken waiter that finds the
// value taken by someone else registers again. Close wakes every waiter.
//
// # Unbounded
//
// An MPSC queue: any number of senders, one receiver at a time. It is
// crossbeam's list channel reduced to one consumer: a linked list of blocks
// of 31 slots (32 positions per block; the last position of a block is the
// "next block being installed" marker). A sender CASes the tail index; the
// one that takes a block's last slot allocates and installs the next block
// (tail block pointer, then tail index, then the old block's next pointer,
// all before writing its slot), so a send allocates once per 31 values and
// never waits except, briefly, for another sender installing a block. The
// receiver reads slots in order (a ready flag per slot), waiting for a send
// in progress as Bounded does, so ErrEmpty is linearizable. The receiver
// keeps the block it leaves as a spare for the next install (every slot of
// it was written and read, and no sender can claim a slot in a past lap),
// so a steady stream allocates nothing; other blocks are left to the
// garbage collector. Close sets the tail's closed bit. The receiver
// waits in a waiter list with the same Dekker protocol as Bounded's
// receivers. Concurrent receives are a bug; an atomic flag held for the
// duration of each receive call catches them and panics with
// ErrConcurrentRecv.
//
// # Select
//
// RecvFutures of Bounded and Unbounded channels (and SendFutures of Bounded
// ones) are safe in future.Select and future.Race: the first ready child
// wins, and the others are cancelled in the same poll. A cancelled
// RecvFuture never took a message (it takes one only in the poll that
// returns it) and passes on any wake it had been given; a cancelled
// SendFuture never placed its value. The package's tests check that under
// random selects over 2-4 channels from tasks and goroutines.
//
// # Oneshot
//
// NewOneshot makes one shared state (one allocation) that a OneshotSender and
// a OneshotReceiver, both value types, point to. There is no mutex: every
// transition is a CAS on one atomic word of bits. SENDING means a send was
// claimed. VALUE, TX_CLOSED and RX_CLOSED are terminal and never cleared.
// RX_WAKER means the receiver's Waker is stored. TAKEN means the value was
// delivered. They are bits, not one of four states (empty, value sent,
// receiver waiting, closed), so that "receiver waiting" can coexist with
// any other state (whoever sends or closes learns in the same atomic step
// whether to wake) and so that the two sides' closes differ (after the
// receiver closes, a value already sent stays receivable).
//
// The receiver writes its Waker only while RX_WAKER is clear and no terminal
// bit is set, then publishes it with a CAS that sets RX_WAKER and fails if a
// terminal bit appeared. To replace the Waker on a re-poll with a different
// one, it first clears RX_WAKER by a CAS that also fails on a terminal bit.
// Whoever ends the wait (a Send setting VALUE, the sender's Close setting
// TX_CLOSED, the receiver's Close setting RX_CLOSED) sets its bit atomically
// and reads and wakes the Waker only if the state it replaced had RX_WAKER.
// That read comes after the receiver's publishing CAS, and the receiver never
// writes the Waker after a terminal bit, so there is neither a lost wakeup
// nor a data race. A registration carries a generation number, so cancelling
// an older future cannot remove a newer one's Waker. A cancelled receive only
// withdraws its Waker; a value sent meanwhile stays for a later TryRecv or
// Recv. Send returns the bare ErrClosed if the receiver closed first (the
// caller keeps the value), and ErrAlreadySent on a second Send.
//
// # Broadcast
//
// A ring of capacity slots indexed by an ever-growing tail. Each slot holds a
// value and the position it was written for, under a per-slot RWMutex (so
// receivers copy a large T in parallel). Senders are serialized by a mutex,
// which also orders Close and Subscribe against sends; a send writes the slot
// and then publishes the new tail with an atomic store. Each receiver keeps
// its own position. When it reads a slot, the slot's position decides: equal
// is the message, older means nothing yet, newer means the receiver was
// lapped; it then gets a *LaggedError with the exact count missed and
// continues from the oldest retained message. Send never waits: it
// overwrites the oldest slot, returns the number of subscribers, and returns
// ErrNoReceivers without keeping the value when there are none.
//
// Waiting receivers (tasks and goroutines together) sit in one waiter list.
// A receiver registers by pushing its waiter and incrementing an atomic count
// under the list lock, then rereads tail and closed. A sender stores the
// tail, then reads the count, and takes the list lock only when the count is
// non-zero. Both sides use sequentially consistent atomics, so at least one
// sees the other, and a send with no waiters takes no waiter lock. Every
// send wakes all waiters outside the lock (PopInto, WakeList). A wake only
// means "look": nothing is handed over, so a cancelled receive has nothing
// to pass on, and a waiter that finds nothing new registers again. After
// Close, receivers drain what they have not seen, then get ErrClosed.
//
// # Watch
//
// A single value with a version counter. The value and version are written
// under an RWMutex, and the version is mirrored in an atomic so that
// HasChanged and the futures compare it with the receiver's last-seen version
// without a lock. Send and SendModify (which modifies in place under the
// lock; a panic in the callback releases it) bump the version and then wake
// every waiting receiver outside the lock, with the same count-then-recheck
// handshake as Broadcast, so Changed never misses the last send. Changed
// completes when a newer version exists and marks it seen; Borrow does not
// mark it seen, BorrowAndUpdate does. After Close, a receiver still sees the
// last unseen change, then gets ErrClosed, and the value stays readable.
package channels
