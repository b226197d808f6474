// Package iodriver connects the runtime's I/O backend (package backend:
// io_uring, epoll, kqueue, poll or IOCP) to its scheduler: it opens the
// backend instances (rings), takes the runtime's operations to them, collects
// their completions and hands each to its waiter, and parks the workers
// that wait for I/O.
//
// It owns the rings (Ring: a backend instance, its count of operations in
// flight, its holder and the flags that wake it, its read-pool
// registration, its operation counters), the choice of a socket's home
// ring (Home) and of a worker's ring (RingOf), and the scheduler.Blocker
// protocol (TryAcquire, Covers, Release, Block, Unpark, with Kick for the
// timers). It does not own the operations: an op record (package blitz's
// ioOp, inside a future) is its Waiter, and its completion is the Waiter's
// to store; nor the sockets, nor the armed receives, whose completions it
// hands to the delivery that package blitz set (SetArmed).
//
// # Callers
//
// Package blitz's New opens the backend (OpenBackends), makes the driver
// (New), gives it the scheduler (SetScheduler) and the delivery of armed
// receives (SetArmed), and hands it to the scheduler as the Blocker beside
// the timer driver (its blockingDriver, whose Maintain calls Poll). Its
// futures submit to a ring (Ring.Submit) and dispose of completions nobody
// will read (Ring.Dispose); Runtime.Shutdown calls Close after the workers
// stopped.
//
// # Protocol
//
// Rings. Worker w serves Rings()[w % len(Rings())]. A ring's completions
// are collected in two places: by a worker of the ring at the start of each
// tick, without blocking, if no other worker is collecting it (Poll); and by
// the parked worker that holds the ring, which sleeps in the ring's Wait
// (Block), or in Go's network poller on the ring's descriptor (ringPoller)
// where the backend has one.
//
// Parking. A worker parks in its ring only while the ring has an op in
// flight; otherwise on its channel, and the submit that gives the ring its
// first op brings one back. The two mirrored halves:
//
//  1. Submit raises the ring's in-flight count, then loads the holder and
//     the workers' parked bits (watch).
//  2. A parking worker sets its parked bit, then loads the in-flight count
//     (TryAcquire).
//
// Waking a holder. Unpark and Kick store a flag (unparked, kicked), then
// load looking; the holder, collecting in its poller's look, clears
// looking, then loads the flags. So either the waker sees looking clear and
// calls the backend's Wake, or the holder sees the flag. The backend's Wake
// is sticky only until the next Wait, which may be another worker's Poll;
// so Block checks the flags once it holds the ring's reap lock.
//
// Timers. Of the parked holders, those whose deadline another holder's
// covers sleep without a limit (TryAcquire), so that a deadline wakes one
// worker, not every ring's.
//
// Panics. A Waker that panics when a completion wakes it is contained
// (contain.Wake): the completion is stored, the panic is reported through
// the scheduler and counted, and the rest of the batch is delivered.
//
// # Platforms
//
// backend_linux.go opens io_uring, else epoll (the build tags
// blitz_nouring and blitz_noepoll compile either out); backend_bsd.go
// kqueue; backend_pollonly.go poll(2), the one backend of the Unix systems
// that have neither (illumos, Solaris, AIX), which Linux, darwin and the
// BSDs open too when it is named (backend_poll.go); backend_windows.go
// IOCP; backend_other.go none. poller_unix.go registers a ring's
// descriptor with Go's poller; poller_other.go has none.
package iodriver
