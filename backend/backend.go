package backend

import (
	"net/netip"
	"time"
)

// Backend is a completion-based I/O backend: io_uring, epoll, kqueue or
// IOCP behind one contract (see the package doc).
//
// Concurrency: Submit, Flush, Wake and every method of Resources and
// Buffers may be called from any goroutine, concurrently. Wait is called by
// one goroutine at a time; a second concurrent call returns ErrBusy. Close
// may be called from any goroutine, once; later calls return ErrClosed.
type Backend interface {
	// Name is the backend's name: "uring", "epoll", "kqueue" or "iocp".
	Name() string
	// Caps reports what the backend can do on this system.
	Caps() Caps

	// Submit hands op to the backend (see Op for the ownership rule). It
	// returns nil and the op completes later, exactly once finally; or it
	// returns an error (ErrInvalid, ErrClosed, ErrUnsupported) and the op
	// never completes and was not kept. Submit may queue the op in user
	// space: it reaches the kernel no later than the next Flush or Wait,
	// at once if a goroutine is blocked in Wait.
	Submit(op *Op) error
	// Flush pushes queued submissions to the kernel.
	Flush() error
	// Wait flushes, then fills out with completions and returns how many.
	// When none is ready it waits: forever if timeout is negative, not at
	// all if it is zero, else up to timeout (one too long for the clock,
	// such as math.MaxInt64, is forever too). It returns 0 early when Wake
	// is called. After Close it returns the completions of the ops Close
	// cancelled, never blocking, then (0, ErrClosed).
	Wait(out []Completion, timeout time.Duration) (int, error)
	// Wake makes a goroutine blocked in Wait return promptly, or, when
	// none is, the next Wait. Wakes coalesce: many Wakes before a Wait
	// make it return once.
	Wake() error
	// Close cancels every op in flight and returns when the kernel holds
	// none of their buffers; their final completions stay readable through
	// Wait. A Wait blocked in another goroutine returns. Descriptors the
	// caller opened stay open (close them with CloseFD or a KindClose op
	// before Close). After Close, Wake returns nil or ErrClosed and does
	// nothing.
	Close() error

	// TrySend and TryRecv are the fast path of a stream socket: they send
	// from or receive into buf at once, when the socket can do it without
	// waiting, and return the byte count (TryRecv: 0 is end of stream); when
	// it cannot, they return ErrWouldBlock and the caller submits the op.
	// Like an op, one call moves at most MaxRW bytes.
	// No op, no completion, no wake: a send on a socket with room in its
	// buffer, or a read of data already there, costs one system call on
	// the caller's goroutine, in parallel with other goroutines' (an
	// io_uring submission runs on one thread per ring). Backends without
	// the path return ErrUnsupported. The caller must not use them while an
	// op of the same direction is in flight on fd: they would overtake it.
	TrySend(fd FD, buf []byte) (int, error)
	TryRecv(fd FD, buf []byte) (int, error)

	Resources
	Buffers
}

// Resources is the synchronous control plane: making sockets and files in
// the form the backend needs (non-blocking, overlapped, associated with a
// completion port) and configuring them. Errors are *Error values.
type Resources interface {
	// Socket makes a socket of family and type, ready for the backend's
	// operations and closed on exec.
	Socket(family Family, typ SockType) (FD, error)
	// Bind binds fd to a local address.
	Bind(fd FD, a Addr) error
	// Listen marks the stream socket fd as listening; backlog <= 0 means
	// the system's maximum.
	Listen(fd FD, backlog int) error
	// LocalAddr and PeerAddr return the addresses of fd's ends.
	LocalAddr(fd FD) (Addr, error)
	PeerAddr(fd FD) (Addr, error)
	// SetOption and Option set and read a socket option; see Option for
	// the values.
	SetOption(fd FD, opt Option, value int) error
	Option(fd FD, opt Option) (int, error)
	// Shutdown shuts down the read half, the write half or both of a
	// connected socket.
	Shutdown(fd FD, how ShutdownHow) error
	// JoinGroup joins the datagram socket fd to the multicast group on the
	// interface with index ifindex (0 means the system's choice).
	JoinGroup(fd FD, group netip.Addr, ifindex int) error
	// OpenFile opens a file for the backend's read and write operations.
	OpenFile(path string, flags OpenFlags, perm uint32) (FD, error)
	// CloseFD closes fd synchronously. Ops in flight on fd must have
	// completed (use a KindClose op otherwise).
	CloseFD(fd FD) error
}

// Buffers are groups of buffers the backend picks from when data arrives
// (Op.Flags&SelectBuffer), so that an idle connection holds no buffer while
// it waits: io_uring's provided-buffer rings, emulated on the others.
type Buffers interface {
	// RegisterBufferGroup makes group id with count buffers of size bytes
	// each. count must be a power of two from 1 to 32768 and size from 1 to
	// 1<<20 (ErrInvalid); a group registered twice is ErrExists. A
	// BufferArena holds the memory of count buffers without making it all
	// at once.
	RegisterBufferGroup(group uint16, count, size int) error
	// Buffer returns buffer id of group (a completion's BufferID). It
	// belongs to the caller until ReleaseBuffer.
	Buffer(group, id uint16) []byte
	// ReleaseBuffer gives buffer id back to group for later recvs. Releasing
	// a buffer the caller does not hold is ErrInvalid.
	ReleaseBuffer(group, id uint16) error
}

// Caps are the capabilities of a backend on this system.
type Caps uint32

const (
	// CapUnixSockets: FamilyUnix sockets work.
	CapUnixSockets Caps = 1 << iota
	// CapNativeMultishot: Multishot accept is served by the kernel (one
	// submission for many connections) rather than emulated.
	CapNativeMultishot
	// CapNativeBufferGroups: SelectBuffer is served by the kernel.
	CapNativeBufferGroups
	// CapPoll: KindPoll works for both EventIn and EventOut.
	CapPoll
	// CapCancelFD: KindClose cancels the descriptor's ops in the kernel
	// rather than in user space.
	CapCancelFD
	// CapNativeCompletions: the kernel itself runs submitted ops and
	// reports their completion (io_uring, IOCP), rather than the backend
	// emulating it on readiness. There, an op submitted from a task is
	// usually cheaper than the TrySend fast path; a goroutine that would
	// block waiting for the op's completion still gains from the fast path.
	CapNativeCompletions
	// CapFileOps: KindOpenAt, KindFsync and KindStatx are served (io_uring
	// from Linux 5.6). Without it Submit refuses them with ErrUnsupported.
	CapFileOps
	// CapFtruncate: KindFtruncate is served (io_uring from Linux 6.9).
	CapFtruncate
)

// Has reports whether c has every capability of want.
func (c Caps) Has(want Caps) bool { return c&want == want }

// Option is a socket option, for SetOption and Option. Boolean options take
// 0 and 1.
type Option uint8

const (
	// OptNoDelay: TCP_NODELAY (1 disables Nagle's algorithm).
	OptNoDelay Option = iota + 1
	// OptKeepAlive: SO_KEEPALIVE with the idle time and probe interval in
	// seconds; 0 turns it off.
	OptKeepAlive
	// OptLinger: SO_LINGER in seconds; -1 turns it off (the default), 0
	// makes close reset the connection.
	OptLinger
	// OptReuseAddr: SO_REUSEADDR.
	OptReuseAddr
	// OptReusePort: SO_REUSEPORT (ErrUnsupported where absent).
	OptReusePort
	// OptBroadcast: SO_BROADCAST.
	OptBroadcast
	// OptRecvBuffer and OptSendBuffer: SO_RCVBUF and SO_SNDBUF in bytes
	// (the kernel may round or double them).
	OptRecvBuffer
	OptSendBuffer
	// OptV6Only: IPV6_V6ONLY.
	OptV6Only
	// OptMulticastLoop: IP_MULTICAST_LOOP / IPV6_MULTICAST_LOOP.
	OptMulticastLoop
	// OptMulticastTTL: IP_MULTICAST_TTL / IPV6_MULTICAST_HOPS.
	OptMulticastTTL
	// OptError: SO_ERROR, read only: the pending error as an errno, 0 if
	// none.
	OptError
)

// ShutdownHow says which half of a connection Shutdown shuts.
type ShutdownHow uint8

const (
	ShutdownRead ShutdownHow = iota + 1
	ShutdownWrite
	ShutdownBoth
)

// OpenFlags say how OpenFile opens.
type OpenFlags uint16

const (
	OpenRead      OpenFlags = 1 << iota // read only
	OpenWrite                           // write only (with OpenRead: both)
	OpenCreate                          // create if absent
	OpenTruncate                        // truncate to 0 bytes
	OpenAppend                          // writes at the current position append
	OpenExclusive                       // with OpenCreate: fail with ErrFileExists if it exists
)

// Pollable is implemented by a backend that can be waited on through Go's
// own network poller instead of a blocking Wait, so that the goroutine
// waiting for completions parks as a goroutine does on a net.Conn: its
// thread and Go's P are free for other goroutines while it waits, and no
// system call holds either.
//
// The waiter (the one goroutine that would call Wait) uses it like this:
//
//	until := b.StartPolling()
//	n, _ := b.Wait(out, 0) // after registering interest in PollFD's readiness
//	// if n == 0: wait for PollFD to become readable, or until passes
//	b.StopPolling()
//
// While polling is on, PollFD polls readable whenever a completion is ready
// for Wait, a Wake is pending, or the backend's own deadline (a linked
// timeout, a KindTimeout) is due, and a Submit reaches the kernel at once,
// as it does while a goroutine blocks in Wait. Readiness is edge-triggered:
// the waiter must look with Wait(out, 0) after it has registered its
// interest, and again after each readiness, before it waits once more.
type Pollable interface {
	// PollFD returns the descriptor to wait on, and false when this
	// instance cannot be polled (then the caller uses Wait).
	PollFD() (FD, bool)
	// StartPolling turns polling on (again: it may be called repeatedly)
	// and returns how long until the backend's own next deadline, when the
	// waiter must call Wait(out, 0) even if PollFD stayed quiet; negative
	// when the backend has none it keeps in user space.
	StartPolling() time.Duration
	// StopPolling turns polling off; Submit may batch again.
	StopPolling()
}
