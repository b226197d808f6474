// Package reactor emulates the completion-based backend.Backend over a
// readiness poller: it is the body of the epoll, kqueue and poll(2) backends, which
// supply only the small platform part, a Poller (register a descriptor for
// edge-triggered read and write readiness, wait for events, wake a waiter).
// The logic is written once and tested on Linux through epoll.
//
// # Submitting
//
// Every descriptor has a state record (fdState, in a two-level table
// indexed by the descriptor number, so that 10^4 descriptors cost a few
// dozen bytes each and a lookup takes no lock) with three FIFO queues, made
// when an op first waits in one of them and kept until the descriptor is
// closed (a descriptor whose ops never wait holds none): the read side (recv, recvfrom, accept, read, readv), the write side (send,
// sendto, connect, write, writev) and polls. Submit tries the system call
// at once when the op's queue is empty (most sends and many recvs complete
// there, without waiting); a result goes on the ready list as a completion,
// EAGAIN queues the op and registers the descriptor with the poller, once,
// for edge-triggered read and write readiness. On a readiness event the
// waiting goroutine runs that side's queue in order until an op gets EAGAIN
// again, so two recvs on one descriptor complete in submission order and a
// recv and a send proceed independently. A connect that returns EINPROGRESS
// waits for writability and reads SO_ERROR. Regular files and block devices
// are never waited on (they are always ready, and epoll refuses them): their
// reads and writes run synchronously in Submit; other descriptors handed to
// read and write ops (pipes, terminals) are switched to non-blocking mode the
// first time. Descriptors should be closed through the reactor (CloseFD or
// KindClose); a number the kernel hands out again through Socket, OpenFile
// or an accept has its record reset, so that one closed behind the
// reactor's back is registered afresh.
//
// A SelectBuffer recv takes a buffer from its group only when it runs, so an
// idle connection holds none; an empty group gives ErrNoBuffers if data is
// waiting (found by a one-byte MSG_PEEK), and end of stream gives the buffer
// back. The free buffers a burst of reads left written go back to the system
// once they have not been taken for a quarter of a second (TrimIdle, which
// the runtime calls before a worker sleeps), all but a few kept for the next
// burst; the buffers a steady load keeps using stay. A Multishot accept
// accepts until EAGAIN on every readiness event,
// posting one completion flagged More per connection, and stays at the head
// of its queue.
//
// An armed receive (ArmRecv) reads at once, and waits for the poller only
// when that read finds nothing. On a poller that reports every arrival of
// data (EdgePerArrival: epoll), the read is skipped when the descriptor's
// last armed read emptied it (EAGAIN, or a read shorter than its buffer)
// and no event has come since: data that comes later brings an event, so
// a connection that answers each message saves the read that would find
// nothing. An event that says the peer closed (PeerClosed, EPOLLRDHUP), or
// a hang-up or error, ends the skipping for the descriptor's life, since
// the end of stream may come with the last data and no event of its own.
//
// # Timers, cancellation, close
//
// KindTimeout ops and linked timeouts (Op.Timeout on an I/O op, armed only
// when the op has to wait) live in a min-heap; Wait polls with the smaller of
// the caller's timeout and the next deadline. An expired linked timeout
// takes its op out of its queue and completes it with ErrTimeout. A Cancel
// finds its target in O(1) through the target's own bookkeeping (its queue
// links in Op.Internal.Next/Prev, its heap index in Op.Internal.State):
// a queued target completes with ErrCanceled and the cancel with nil; a
// target that is not waiting (already completed) gives ErrNotFound. Since
// the kernel holds no buffer of an op between system calls, cancellation is
// entirely in user space. KindClose (and CloseFD) cancels the descriptor's
// queued ops, deregisters and closes it. Close cancels everything, wakes a
// blocked Wait and closes the poller once no goroutine is inside it.
//
// # Locking
//
// Each fdState has a mutex guarding its queues, its registration and the
// queue links (Next, Prev) and Internal.Token of the ops in them; the
// nonblocking system calls of an op run under it, which is what keeps the
// queue order. One reactor mutex (mu) guards the ready list, the timer heap,
// every op's Internal.State (in-flight bit and heap index) and the
// sleep/wake flags. The order is fdState.mu before mu, never the reverse:
// the expiry of a linked timeout pops the heap under mu, releases it, then
// takes the fd's lock and removes the op only if it is still queued. No lock
// is held across the blocking poll. The waiting goroutine records under mu
// that it sleeps and until when; a completion made by another goroutine
// (an immediate Submit, a Cancel) or a timer due before that deadline wakes
// it through the poller, at most once per sleep. An op that merely has to
// wait needs no wake: the kernel reports its readiness to the sleeping poll.
// Nor does a completion posted while the waiting goroutine dispatches what
// its poll returned: it pops the ready list again before Wait returns.
//
// Nothing is allocated per op in steady state: queue links and bookkeeping
// live in Op.Internal, the ready list is a ring that grows and is reused, and
// the timer heap is a reused slice.
package reactor
