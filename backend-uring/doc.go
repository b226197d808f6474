// Package uring is the io_uring backend of blitz (Linux 5.19 and later
// for every feature; older kernels down to 5.6 with fallbacks), written
// against the kernel ABI directly: io_uring_setup, io_uring_enter and
// io_uring_register through x/sys/unix, the rings mapped with mmap, no cgo
// and no liburing.
//
// # Submission and completion
//
// Submit fills SQEs under a mutex and publishes the SQ tail; the SQEs reach
// the kernel at the next Flush or Wait, or at once when a goroutine is
// blocked in Wait (Submit then calls io_uring_enter itself). Every op gets
// a record in a slab of fixed heap chunks, indexed by the user_data token
// (tag, 24-bit generation, slot): the record holds everything the kernel
// reads or writes besides the caller's buffers (sockaddr and its length,
// iovecs, msghdr, timespecs) and keeps the Op, and through it the
// buffers, reachable until the op's last CQE, after a cancel too. Internal
// requests (the wake read, Wait's timer, buffer provisioning, internal
// cancels) have tags of their own and never reach the caller. Wait is the
// only consumer of the CQ; it blocks in io_uring_enter with GETEVENTS and a
// timeout (IORING_ENTER_EXT_ARG, or an internal TIMEOUT request that also
// completes on the next CQE). CQEs that did not fit in the CQ wait in the
// kernel (IORING_FEAT_NODROP, required) and are pulled in when the SQ flags
// say IORING_SQ_CQ_OVERFLOW. Wake writes an eventfd on which a READ is
// always pending; a flag makes Wakes coalesce.
//
// A linked timeout (Op.Timeout) is an IORING_OP_LINK_TIMEOUT linked after
// the op. The two CQEs arrive in either order; the record counts them and
// delivers one completion after the last, ErrTimeout when the timer fired
// and the op was cancelled. A KindClose is an ASYNC_CANCEL of every request
// on the descriptor (IORING_ASYNC_CANCEL_FD|ALL), hard-linked to the CLOSE;
// its completion is held back until the ops submitted on the descriptor
// before it have completed, so the caller sees them first. Without
// CANCEL_FD (before 5.19, or Options.DisableCancelFD) the backend cancels
// those ops one by one and queues the CLOSE when the last has completed.
//
// # Fallbacks and setup flags
//
// Each feature newer than the minimum has a fallback, forced by an Options
// switch for tests: multishot accept is emulated by re-arming single-shot
// accepts; the backend.PollFirst hint becomes IORING_RECVSEND_POLL_FIRST
// from 5.19 and is ignored before (or with Options.DisablePollFirst); buffer
// groups use provided-buffer rings, else PROVIDE_BUFFERS,
// else a POLL_ADD followed by a read into a free group buffer in user
// space. Caps reports what the kernel serves natively. When io_uring_setup
// is refused (ENOSYS, EPERM: seccomp, containers, the io_uring_disabled
// sysctl) New fails with an error wrapping backend.ErrUnsupported, so the
// runtime can use epoll. SUBMIT_ALL is used where the kernel has it, so
// that one bad SQE does not hold back the rest of a batch.
//
// The file-system kinds are probed too: OPENAT, FSYNC and STATX (5.6) give
// backend.CapFileOps, FTRUNCATE (6.9) backend.CapFtruncate, and Submit
// refuses a kind the kernel lacks with backend.ErrUnsupported
// (Options.DisableFileOps and DisableFtruncate force that). The record holds
// the NUL-terminated path and the statx buffer the kernel uses; the statx
// result is decoded into the caller's backend.FileStat at the completion. A
// request stopped in an io-wq thread by a cancel (an openat waiting on a
// FIFO) reports the kernel's EINTR or ERESTARTSYS, which become
// backend.ErrCanceled.
//
// # Task work
//
// io_uring finishes a request that had to wait (a recv on an empty socket)
// as task work of the thread that submitted it, the thread whose
// io_uring_enter pushed the SQE. From 5.19 the ring is set up with
// COOP_TASKRUN|TASKRUN_FLAG (Options.DisableCoopTaskrun turns it off): the
// kernel then never interrupts that thread while it runs. A sleeping
// thread (a futex wait in the Go scheduler, an epoll_wait, this ring's own
// io_uring_enter) is woken as before; a running one runs the task work at
// its next kernel entry, at the latest the next timer tick or Go's
// preemption signal (TestCoopTaskrunBusySubmitter measures about a
// millisecond). Wait's harvest sees IORING_SQ_TASKRUN and enters with
// GETEVENTS once, which runs the task work queued to its own thread. With
// a ring per thread that also submits (the runtime's per-worker rings) the
// interrupt a completion from another core used to cost is gone.
//
// The ring is set up without SINGLE_ISSUER and DEFER_TASKRUN: Submit runs
// on any goroutine, and goroutines move between threads.
package uring
