// Package waker provides the Waker of blitz for Go, the value that a future
// leaves behind when it returns not-ready and that reschedules its task, and
// the intrusive waiter list that the sync primitives and channels share. The
// package imports only the standard library.
//
// Comments elsewhere in the package cite the sections below by name.
//
// # Wakers
//
// A [Wakeable] is whatever a wake reaches: a task header, whose Wake
// reschedules the task through the notified-bit protocol of the task state
// word; a goroutine's [*Signal]; a test counter. Its contract:
//
//   - Wake must not block. It is called by whoever made the awaited event
//     happen, often with that party's lock held (see "Waking outside the
//     lock"). A Wake that takes locks of its own (a run queue's) must take
//     only locks that are never held while calling into a primitive, so
//     that lock order is always primitive, then scheduler.
//   - Wake is safe to call from any goroutine, concurrently, any number of
//     times, before, during or after the target waits.
//   - Wakes coalesce. A wake of a target that is already awake (a task
//     scheduled, or running, which sets its notified bit; a Signal with a
//     pending wakeup) is absorbed into that one: the target runs or returns
//     at least once after the last wake, not once per wake. What the wake
//     was about lives in the primitive's state, never in the wake itself.
//
// A [Waker] is a value wrapping a Wakeable: [New] for a pointer, [Func] for a
// function, [Noop] for nothing. It is two words, copied freely, comparable
// with ==, and New of a pointer allocates nothing (the interface holds the
// pointer). [Waker.WillWake] reports whether two Wakers wake the same target,
// so that a future polled again may keep the Waker it registered, as Rust's
// will_wake. New rejects a Wakeable whose dynamic type is not comparable
// (panic [ErrIncomparable]) so that == and WillWake never panic; Func wraps
// its function in a pointer for the same reason.
//
// # The zero Waker
//
// The zero Waker's Wake is a no-op, and [Waker.IsZero] reports it. A panic
// was the alternative; we rejected it because the zero Waker has a use: the
// zero [Waiter] carries it, and a primitive may push a waiter whose owner
// learns of its wake without being called, by finding it unlinked ("Unlinked
// means woken") the next time it is polled or when it checks after a
// TryLock-style fast path. A future that returns not-ready with only a zero
// Waker registered is a lost wakeup, as the poll contract says; the poll
// contract's tests, not this package, catch that. WillWake reports false when
// either Waker is zero, so a zero registration is always replaced.
//
// # No clone, no drop
//
// Rust's RawWaker (and the Zig runtime modelled on it) has clone and drop
// entries that move the task's reference count, because there the count is
// what keeps the task's memory alive while a Waker to it exists. In Go the
// garbage collector owns memory: a Waker holds a typed pointer, never an
// integer, so the task lives as long as any Waker to it is reachable, and a
// Waker that is overwritten or dropped needs no bookkeeping. Copying a Waker
// is cloning it; forgetting it is dropping it. The task header keeps its
// reference count only where the count carries meaning (join interest,
// detach), and a Waker that outlives its task wakes a completed task, which
// the header's state word ignores. Tasks are never recycled; a pool of task
// objects would need Wakers to carry a generation.
//
// # Signals
//
// A [Signal] is how an ordinary goroutine takes part: New(sig) is the Waker
// it registers in a waiter list, and [Signal.Wait] blocks it until a wake
// or until its context.Context is done, returning ctx.Err() as is, as
// golang.org/x/sync/semaphore does. A Signal holds at most one pending
// wakeup in a channel of capacity 1 that Wake sends to without blocking, so
// wakes coalesce, and a wake before the Wait makes the Wait return at once.
// The zero Signal is ready: the channel is made on first use and published
// by a CAS, so racing first users agree on one. A Signal is reusable; a wake
// meant for an earlier wait can make a later Wait return early, so a waiter
// loops on its condition, as with a condition variable.
//
// sync.Cond was the alternative for the blocking tier. It cannot be woken by
// a task's Waker without holding its lock, cannot wait on a context, and its
// waiters are not in the primitive's FIFO list, so tasks and goroutines could
// not queue in one order. A fresh channel per wait costs an allocation per
// wait; a Signal is made once per goroutine (or per primitive call, still one
// allocation for the channel) and reused.
//
// A [SignalPool] recycles Signals across blocking calls, so that a wait
// allocates nothing in steady state. A channel made inside a
// testing/synctest bubble belongs to that bubble, and the Go runtime ends
// the process when a goroutine outside it uses it; so the pool makes its
// Signals' channels outside any bubble and hands a goroutine that may be in
// one ([MayBeInBubble]) a Signal of its own, which it does not keep.
//
// # The waiter list
//
// A [List] is a FIFO of [Waiter] nodes, doubly linked through the nodes
// themselves, so that a future embeds its Waiter and a wait allocates
// nothing. Push, remove, front, pop and wake one are O(1). A Waiter carries
// the Waker to call and a Value of the primitive's choosing (permits wanted,
// reader or writer, a value handed over), and it knows its list, which
// catches misuse in O(1).
//
// The list is not synchronized. The primitive that owns it guards it, every
// Waiter in it and its own state with one lock, because a waiter must check
// the state and enqueue in one critical section, and a releaser must update
// the state and pick a waiter in one: a list with its own lock, or a
// lock-free list, would leave a gap between the two for a wakeup to fall
// into. Tasks (registering their task's Waker) and goroutines (registering a
// Signal) queue in the same list, in arrival order.
//
// # Unlinked means woken
//
// A Waiter leaves its list in exactly two ways: its owner removes it
// ([List.Remove]), or a waking party takes it ([List.PopFront],
// [List.WakeOne], [List.WakeAll], [List.PopInto]), after handing it what it
// waited for through the primitive's state or the Waiter's Value. So, for an
// owner that pushed its Waiter and did not remove it, [Waiter.Linked]
// reporting false, read under the lock, is the wake, and the Waker call is
// only the nudge to look. This is why a spurious Signal wakeup is harmless,
// why coalescing loses nothing, and why a zero Waker can be pushed.
//
// # The waiting protocol
//
// For a future (the task tier), on each poll, under the primitive's lock:
//
//  1. If its Waiter is linked: if the Waker in it does not WillWake the
//     poll's Waker, SetWaker; return not-ready.
//  2. If it was pushed and is now unlinked: it was woken; take what was
//     handed over and return ready.
//  3. Otherwise (first poll): try the fast path; if it fails, PushBack the
//     Waiter with the poll's Waker and return not-ready.
//
// For a goroutine (the blocking tier), with a Signal sig and ctx:
//
//  1. Lock; try the fast path; if it fails, PushBack(&w, New(&sig)); unlock.
//  2. sig.Wait(ctx). On nil: lock; if !w.Linked() the wake is real: unlock
//     and return success; else unlock and go back to 2 (spurious).
//  3. On ctx's error: lock; if Remove(&w) reports true, unlock and return the
//     error; if false a waking party took w first: proceed as woken (or pass
//     what was handed over on to the next waiter) and unlock.
//
// The Example of this package builds a tiny event this way.
//
// # Cancellation
//
// Go has no destructors, so a future that registered a Waiter and is
// abandoned (select, race, timeout) must be cancelled explicitly, and its
// cancel calls Remove under the lock. Remove's result says which side won:
// true, the waiter left and nothing was handed to it; false, it was woken
// first, and a permit or value handed to it must be released or passed on,
// or it is lost. Tokio's Semaphore and Notify do the same in their drop.
//
// # Waking outside the lock
//
// Wake never blocks, so calling it under the primitive's lock is correct
// ([List.WakeOne], [List.WakeAll] do), but a task's Wake pushes onto a run
// queue and may unpark a worker, which lengthens the critical section that
// every other waiter and releaser contends on. A [WakeList] takes the Wakers
// out instead: under the lock, [List.PopInto] unlinks up to [WakeListCap]
// (32) waiters and keeps their Wakers; after unlocking, [WakeList.WakeAll]
// calls them. Waking exactly the waiters present at one moment (notify all,
// close) is PopInto followed by WakeAll under the lock for the rare overflow
// beyond 32, so no waiter that arrives later is woken and none present is
// missed; Tokio's notify_waiters instead relocks between batches behind a
// guard node, which we do not need while the overflow is rare. Each waiter is
// unlinked before its Wake is called and before the lock is released, so
// "Unlinked means woken" holds the moment the lock is released. A woken
// goroutine may run as soon as its Wake is called, even under the lock: a
// primitive whose waiters read some of its state without the lock (a
// generation, a closed flag) publishes that state before the first Wake,
// including those of WakeAll under the lock, or its woken waiters do not
// judge a wake by that state alone: they take the lock and check that their
// Waiter is unlinked, which the waker did before calling Wake.
//
// # Misuse
//
// Misuse panics, with a sentinel error of this package as the panic value:
// [ErrNilWaiter] for a nil Waiter, [ErrWaiterLinked] for pushing a Waiter
// that is linked (in this list or another), [ErrForeignWaiter] for removing a
// Waiter linked in another list, [ErrNilWakeable] and [ErrIncomparable] for
// New and Func, [ErrWakeListFull] for pushing into a full WakeList. Removing
// an unlinked Waiter is not misuse: it reports false.
//
// # Alternatives rejected
//
//   - container/list: one allocation per push (its Element), and a removed
//     element cannot tell its owner whether it was removed by the owner or
//     by a waker. BenchmarkListPushRemove measures the difference.
//   - A Waker that is a func(): not comparable, so no WillWake, and every
//     closure over a task allocates.
//   - A Waker that is the bare Wakeable interface: the zero value's Wake
//     would be a nil-interface panic, and the package could not add methods.
//   - A reference-counted Waker with clone and drop: see "No clone, no drop".
package waker
