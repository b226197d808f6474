// Package backend is the contract between the blitz runtime and the
// operating system's I/O: one completion-based interface, Backend, that
// io_uring (backend-uring), epoll (backend-epoll), kqueue (backend-kqueue)
// and IOCP (backend-iocp) implement, and in package backendtest one
// conformance suite that every backend runs.
//
// # Completions, not readiness
//
// A caller describes an operation in an Op (a recv into this buffer, an
// accept on that socket), submits it, and later receives a Completion with
// the result. io_uring and IOCP work this way natively. The epoll, kqueue and poll(2)
// backends emulate it: they try the system call when the op is submitted,
// and when it would block they wait for readiness and perform it then,
// reporting the result as a completion. The caller never sees EAGAIN, never
// retries and never busy-polls; every wait is the backend's Wait.
//
// # Ownership
//
// From Submit until its final completion an Op and everything it points to
// (Buf, Bufs, Addr, Target) belong to the backend, which keeps them
// referenced, so that the garbage collector cannot free a buffer the kernel
// still writes into, including after a cancel, whose target's buffer the
// kernel may hold until the target's own completion. The caller reads the
// results from the Completion (and the Op's buffers) once the final
// completion has arrived, and may then reuse the Op. An Op is never copied
// while in flight: backends hold its address.
//
// Every op that Submit accepted completes finally exactly once: with its
// result, with ErrCanceled (a Cancel, a Close of its descriptor, Close of
// the backend), or with ErrTimeout (its linked timeout). A Multishot accept
// may complete many times before, each completion flagged More.
//
// # Waiting and waking
//
// Wait blocks for completions with a timeout: negative blocks, zero polls,
// positive waits up to it. This is where a runtime worker parks when it has
// nothing to run, with the next timer deadline as the timeout. Wake, from
// any goroutine, makes that Wait return, so a worker that queued a task for
// the parked one can hand it over. Submissions made while a goroutine is
// blocked in Wait reach the kernel at once; otherwise a backend may batch
// them until the next Flush or Wait.
//
// A backend that implements Pollable (io_uring, epoll) can also be waited
// for in Go's own network poller: its PollFD polls readable when Wait has
// something to return, so the waiter parks as a goroutine does on a
// net.Conn, with no system call holding its thread. Between StartPolling
// and StopPolling submissions reach the kernel at once, as during a
// blocking Wait. Readiness is an edge: the waiter looks with Wait(out, 0)
// after it registered its interest, and again after each readiness.
//
// # Cancellation and timeouts
//
// Go has no destructors, so abandoning an operation is explicit: a KindCancel
// op names its Target and asks the kernel to stop it. The target still
// completes, exactly once, with ErrCanceled or its own result if it won the
// race; until then its buffer stays the backend's. A positive Op.Timeout on
// an I/O op is a linked timeout: the backend cancels the op when it expires
// and reports ErrTimeout rather than ErrCanceled, so a deadline needs no
// second op from the caller.
//
// # Buffer groups
//
// An idle connection with a pending read would hold its read buffer for as
// long as it idles; with 10^4 connections that is most of the memory. A
// Recv flagged SelectBuffer holds none: the backend takes a buffer from a
// registered group when data arrives (io_uring's provided-buffer rings;
// emulated elsewhere by reading on readiness into a pooled buffer). The
// completion names the buffer, and the caller gives it back with
// ReleaseBuffer.
//
// A group's memory follows the load, not its count: a BufferArena makes
// the buffers in chunks as they are first taken. A backend that picks the
// buffer itself when data is there (epoll, kqueue, poll(2), IOCP) keeps its
// free buffers in a BufferStack, which hands out the lowest first and,
// once a burst is over, gives back the pages of the buffers that stayed
// untaken for BufferTrimAfter, all but BufferTrimKeep (TrimIdle, which the
// runtime calls when a worker is about to sleep: Trimmer).
//
// # Errors
//
// A backend converts an OS error code once, at its boundary, to a sentinel
// of this package wrapped in an *Error that also carries the code, so that
// errors.Is(err, backend.ErrConnReset) holds on every platform.
// ErrCanceled and ErrTimeout come bare, since they are the results of the
// caller's own requests. Misuse (an invalid Op, a second concurrent Wait)
// gets ErrInvalid or ErrBusy, never a hang or a crash.
//
// # File-system operations
//
// Opening, syncing, stat-ing and truncating a file are ops too (KindOpenAt,
// KindFsync, KindStatx, KindFtruncate), because io_uring runs them in the
// kernel without a thread of ours blocking. Only backends whose Caps have
// CapFileOps (and CapFtruncate) serve them; the others refuse them at
// Submit with an *Error wrapping ErrUnsupported (CheckCaps), never with a
// completion, so the caller falls back to a blocking call on a thread of
// its own (the runtime's blocking pool) without having anything to undo.
// Their arguments and the statx result travel in a FileArgs the Op points
// to (Op.File): the caller's memory, referenced by the op until its final
// completion; the NUL-terminated path the kernel reads and the raw statx
// buffer it writes are the backend's, kept in the op's record as long.
//
// # Resources
//
// Sockets and files are made through the backend (Resources), because each
// backend needs them in its own form: non-blocking for epoll, kqueue and poll(2),
// overlapped and associated with the completion port for IOCP. The
// synchronous socket calls (bind, listen, options, shutdown) sit there too,
// so that the runtime's networking is written once for every platform.
package backend
