package backend

import (
	"fmt"
	"net/netip"
	"time"
)

// FD is a descriptor as the backend made it: a file descriptor on Unix, a
// SOCKET or HANDLE on Windows. Only the backend that made it may use it.
type FD uintptr

// InvalidFD is no descriptor.
const InvalidFD = ^FD(0)

// Kind is what an Op does. The zero Kind is invalid.
type Kind uint8

// The operation set. The fields of Op each kind reads and the results its
// Completion carries are listed with it; fields not listed are ignored.
const (
	// KindNop completes at once with N = 0: a round trip through the
	// backend, and a way to test it.
	KindNop Kind = iota + 1
	// KindAccept takes a connection from the listening socket FD.
	// Completion.FD is the new socket (ready for this backend's
	// operations), Completion.Addr the peer. With Flags&Multishot the op
	// stays armed and completes once per connection, with More set on every
	// completion but the last.
	KindAccept
	// KindConnect connects the socket FD to Addr. N = 0.
	KindConnect
	// KindRecv receives into Buf from the connected socket FD; N is the
	// byte count, 0 meaning the peer shut down its side (end of stream).
	// With Flags&SelectBuffer, Buf is ignored and the data lands in a
	// buffer of group BufferGroup (see Buffers).
	KindRecv
	// KindSend sends Buf on the connected socket FD; N is the byte count,
	// which may be short (the caller sends the rest).
	KindSend
	// KindRecvFrom receives one datagram into Buf from socket FD; N is its
	// length (truncated to len(Buf)), Completion.Addr its source.
	KindRecvFrom
	// KindSendTo sends Buf as one datagram to Addr; N is the byte count.
	KindSendTo
	// KindRead reads into Buf from FD at Offset (a file), or from the
	// current position when Offset is -1 (a pipe or terminal). N = 0 is the
	// end of the file.
	KindRead
	// KindWrite writes Buf to FD at Offset, or at the current position
	// when Offset is -1. N may be short.
	KindWrite
	// KindReadv is KindRead scattering into Bufs.
	KindReadv
	// KindWritev is KindWrite gathering from Bufs.
	KindWritev
	// KindClose closes FD. Ops in flight on FD complete first, with
	// ErrCanceled or with their own result if they finished. After the
	// close op is submitted the caller must not use FD again.
	KindClose
	// KindCancel asks that Target, an op submitted to this backend, be
	// cancelled. The cancel op completes with nil when the request reached
	// the target, or ErrNotFound when the target was not in flight. Either
	// way the target's own final completion arrives exactly once: with
	// ErrCanceled, or with its result if it finished first.
	KindCancel
	// KindTimeout completes with ErrTimeout after Timeout (0 means at
	// once); a cancelled one completes with ErrCanceled.
	KindTimeout
	// KindPoll waits until FD is ready for Events; N is the ready Events
	// (which may include EventErr and EventHup without being asked).
	KindPoll

	// The file-system kinds below are served where Caps has CapFileOps
	// (KindFtruncate: CapFtruncate), today io_uring only; elsewhere Submit
	// refuses them with an *Error wrapping ErrUnsupported, so a caller
	// tries the op and falls back to a blocking call (see "File-system
	// operations" in the package doc).

	// KindOpenAt opens File.Path (relative paths from the process's
	// working directory; FD is not read) with File.OpenFlags and, when it
	// creates the file, permissions File.Perm before the umask. The
	// descriptor is close-on-exec and blocking, as OpenFile's is on Unix.
	// Completion.FD is the new descriptor, which the caller owns (an
	// abandoned open must close it); N = 0. Unlike open(2), io_uring first
	// tries without blocking unless OpenCreate or OpenTruncate is set, so a
	// FIFO's open may not wait for its peer: read-only it succeeds at once,
	// write-only without a reader it fails with ENXIO (ErrIO).
	KindOpenAt
	// KindFsync commits FD's data and metadata to stable storage (fsync),
	// or with Flags&DataSync its data and the metadata needed to read it
	// back (fdatasync). N = 0.
	KindFsync
	// KindStatx fills File.Stat with the metadata of FD (File.Path "") or
	// of File.Path (following symbolic links; FD not read). N = 0. The
	// backend writes File.Stat before the final completion and never after.
	KindStatx
	// KindFtruncate sets the size of the regular file FD to Offset (>= 0).
	// N = 0. Needs CapFtruncate (io_uring on Linux 6.9 and later).
	KindFtruncate

	kindEnd
)

var kindNames = [...]string{
	KindNop: "nop", KindAccept: "accept", KindConnect: "connect", KindRecv: "recv",
	KindSend: "send", KindRecvFrom: "recvfrom", KindSendTo: "sendto", KindRead: "read",
	KindWrite: "write", KindReadv: "readv", KindWritev: "writev", KindClose: "close",
	KindCancel: "cancel", KindTimeout: "timeout", KindPoll: "poll", KindOpenAt: "openat",
	KindFsync: "fsync", KindStatx: "statx", KindFtruncate: "ftruncate",
}

// String returns the kind's name as used in *Error.Op: "recv", "accept".
func (k Kind) String() string {
	if k > 0 && k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool { return k > 0 && k < kindEnd }

// Needs returns the capabilities a backend must have to serve ops of kind
// k: CapFileOps for KindOpenAt, KindFsync and KindStatx, CapFtruncate for
// KindFtruncate, none for the rest (see CheckCaps).
func (k Kind) Needs() Caps {
	switch k {
	case KindOpenAt, KindFsync, KindStatx:
		return CapFileOps
	case KindFtruncate:
		return CapFtruncate
	}
	return 0
}

// OpFlags modify an op.
type OpFlags uint8

const (
	// Multishot keeps a KindAccept armed: one completion per connection
	// (see Completion.More) until it is cancelled, fails, or its socket is
	// closed. Not allowed on other kinds (ErrInvalid).
	Multishot OpFlags = 1 << iota
	// SelectBuffer makes a KindRecv take its buffer from group
	// Op.BufferGroup when data arrives instead of holding Op.Buf while it
	// waits; the completion names the buffer. Not allowed on other kinds.
	SelectBuffer
	// PollFirst is a hint on KindRecv and KindRecvFrom: the caller expects
	// no data yet (a server waiting for the next request), so the backend
	// may wait for readiness before its first attempt instead of making an
	// attempt that fails (io_uring's IORING_RECVSEND_POLL_FIRST). The result
	// is the same with or without it; a backend may ignore it. Not allowed
	// on other kinds.
	PollFirst
	// DataSync makes a KindFsync an fdatasync: the file's data and only
	// the metadata needed to read it back (its size, not its times). Not
	// allowed on other kinds.
	DataSync
)

// Events are readiness conditions, for KindPoll.
type Events uint8

const (
	// EventIn: readable (data, a connection to accept, or end of stream).
	EventIn Events = 1 << iota
	// EventOut: writable.
	EventOut
	// EventErr: an error is pending on the descriptor.
	EventErr
	// EventHup: the peer hung up.
	EventHup
)

// Op is one operation. The caller fills the fields its Kind reads and calls
// Backend.Submit; from then until its final completion the Op, its buffers
// and its address belong to the backend: the caller must not write to them,
// and the backend keeps them referenced (so the garbage collector keeps
// them) until the kernel is done with them, after a cancel too. The final
// completion hands everything back; the Op can then be reused.
//
// An Op must not be copied while in flight: backends keep its address.
type Op struct {
	// Kind is what the op does.
	Kind Kind
	// Flags modify it (Multishot, SelectBuffer).
	Flags OpFlags
	// Events is what a KindPoll waits for.
	Events Events
	// BufferGroup is the group a SelectBuffer recv takes its buffer from.
	BufferGroup uint16
	// FD is the descriptor the op works on.
	FD FD
	// UserData is returned untouched in every completion of the op. The
	// backend never interprets it.
	UserData uint64
	// Owner is the caller's reference to whatever waits for the op (the
	// runtime's I/O future), reached back through Completion.Op.Owner. The
	// backend never reads it; an interface holding a pointer costs no
	// allocation.
	Owner any
	// Buf is the buffer of recv, send, recvfrom, sendto, read and write.
	// One op moves at most MaxRW bytes of it (see MaxRW).
	Buf []byte
	// Bufs are the buffers of readv and writev. One op moves at most
	// MaxRW bytes, and may stop after MaxIOV buffers.
	Bufs [][]byte
	// Offset is the file offset of read, write, readv and writev; -1 means
	// the descriptor's current position.
	Offset int64
	// Addr is the destination of connect and sendto.
	Addr Addr
	// Timeout is the duration of a KindTimeout. On any other kind except
	// KindCancel and KindClose, a positive Timeout is a linked timeout: if
	// the op has not completed when it expires, it is cancelled and
	// completes with ErrTimeout (a Multishot accept: its final completion).
	// A duration whose deadline lies beyond the clock's range (such as
	// math.MaxInt64) never expires.
	Timeout time.Duration
	// Target is the op a KindCancel cancels.
	Target *Op
	// File holds the arguments and result of KindOpenAt and KindStatx
	// (path, open flags and permissions; the Stat the statx fills). It is
	// the caller's, and like Buf the backend keeps it referenced until the
	// final completion: the path bytes the kernel reads are the backend's
	// own NUL-terminated copy, kept with the op's record, but File.Stat is
	// written at the completion. A pointer, not fields, because every op
	// carries an Op and few are file-system ones.
	File *FileArgs

	// Internal is the bookkeeping of the backend that holds the op. Only
	// that backend reads or writes it, between Submit and the final
	// completion; callers leave it alone.
	Internal Internal
}

// FileArgs are the arguments and the result of the file-system kinds,
// referenced from Op.File. A caller embeds one next to its Op (the
// runtime's open and stat futures do) so that submitting allocates nothing.
type FileArgs struct {
	// Path is the file to open (KindOpenAt) or to stat (KindStatx, where
	// "" stats Op.FD). It must not contain a NUL byte (ErrInvalid).
	Path string
	// OpenFlags say how KindOpenAt opens: OpenRead, OpenWrite or both,
	// and any of OpenCreate, OpenTruncate, OpenAppend, OpenExclusive, as
	// for Resources.OpenFile.
	OpenFlags OpenFlags
	// Perm are the permission bits of a file KindOpenAt creates (0o777
	// and the setuid 0o4000, setgid 0o2000 and sticky 0o1000 bits),
	// before the umask.
	Perm uint32
	// Stat is KindStatx's result, written by the backend before the final
	// completion of a successful op.
	Stat FileStat
}

// FileStat is a file's metadata as KindStatx reports it, in POSIX terms
// whatever the platform. Fields the file system does not report are zero.
type FileStat struct {
	// Mode is st_mode: the file type in the S_IFMT bits (0o170000:
	// 0o100000 a regular file, 0o040000 a directory, 0o120000 a symbolic
	// link, 0o010000 a FIFO, 0o140000 a socket, 0o020000 a character and
	// 0o060000 a block device) and the permission bits 0o7777.
	Mode uint32
	// Nlink is the number of hard links.
	Nlink uint32
	// UID and GID own the file.
	UID, GID uint32
	// Blksize is the preferred I/O block size.
	Blksize uint32
	// Ino is the inode number, unique on Dev.
	Ino uint64
	// Dev is the device holding the file and Rdev the device a device
	// file is, both in the platform's dev_t encoding (unix.Mkdev on Linux).
	Dev, Rdev uint64
	// Size is the size in bytes.
	Size int64
	// Blocks is the space allocated, in 512-byte blocks.
	Blocks int64
	// Atime, Mtime and Ctime are the last access, modification and status
	// change; Btime the creation, zero where the file system keeps none.
	Atime, Mtime, Ctime, Btime time.Time
}

// Internal is a backend's per-op bookkeeping, inside Op so that submitting
// allocates nothing. Its meaning is the backend's.
type Internal struct {
	// Token identifies the op inside the backend (an io_uring user_data,
	// a table slot and generation).
	Token uint64
	// State is a backend's per-op state word.
	State uint64
	// Next and Prev link the op into a backend's queues.
	Next, Prev *Op
	// Aux holds whatever else the backend needs (an OVERLAPPED record).
	Aux any
}

// CompletionFlags describe a completion.
type CompletionFlags uint8

const (
	// More: the op is still armed (a Multishot accept) and will complete
	// again; the completion without More is its final one.
	More CompletionFlags = 1 << iota
	// HasBuffer: BufferID names the group buffer holding the data of a
	// SelectBuffer recv. The caller reads Buffer(group, id)[:N] and must
	// release it with ReleaseBuffer.
	HasBuffer
)

// Completion reports that an op finished (or, with More, produced a result
// and stays armed).
type Completion struct {
	// Op is the op, handed back: after the final completion the caller owns
	// it and its buffers again.
	Op *Op
	// UserData is Op.UserData.
	UserData uint64
	// N is the result: a byte count, or the ready Events of a poll.
	N int
	// Err is nil on success, else a sentinel of this package, alone
	// (ErrCanceled, ErrTimeout) or wrapped in an *Error.
	Err error
	// FD is the socket an accept produced, or the file a KindOpenAt
	// opened.
	FD FD
	// Addr is the peer of an accept or the source of a recvfrom.
	Addr Addr
	// Flags are More and HasBuffer.
	Flags CompletionFlags
	// BufferID is the group buffer of a HasBuffer completion.
	BufferID uint16
}

// More reports whether the op stays armed after this completion.
func (c *Completion) More() bool { return c.Flags&More != 0 }

// Family is an address family.
type Family uint8

const (
	// FamilyInet4 is IPv4 (AF_INET).
	FamilyInet4 Family = iota + 1
	// FamilyInet6 is IPv6 (AF_INET6); such sockets also accept IPv4-mapped
	// addresses unless OptV6Only is set.
	FamilyInet6
	// FamilyUnix is Unix-domain sockets (AF_UNIX).
	FamilyUnix
)

// String returns "inet4", "inet6" or "unix".
func (f Family) String() string {
	switch f {
	case FamilyInet4:
		return "inet4"
	case FamilyInet6:
		return "inet6"
	case FamilyUnix:
		return "unix"
	}
	return fmt.Sprintf("Family(%d)", uint8(f))
}

// SockType is a socket type.
type SockType uint8

const (
	// Stream is SOCK_STREAM (TCP, Unix stream).
	Stream SockType = iota + 1
	// Datagram is SOCK_DGRAM (UDP, Unix datagram).
	Datagram
)

// Addr is a socket address: an IP address and port, or a Unix path.
type Addr struct {
	// Family says which of the other fields is meaningful; the zero Addr
	// (Family 0) is no address.
	Family Family
	// IP is the address and port of FamilyInet4 and FamilyInet6.
	IP netip.AddrPort
	// Path is the path of a FamilyUnix address; "" is an unnamed socket,
	// and on Linux a leading '@' an abstract one.
	Path string
}

// AddrPort returns the Addr of an IP address and port: FamilyInet4 for an
// IPv4 address, FamilyInet6 otherwise (IPv4-mapped IPv6 included).
func AddrPort(ap netip.AddrPort) Addr {
	if ap.Addr().Is4() {
		return Addr{Family: FamilyInet4, IP: ap}
	}
	return Addr{Family: FamilyInet6, IP: ap}
}

// UnixAddr returns the Addr of a Unix socket path.
func UnixAddr(path string) Addr { return Addr{Family: FamilyUnix, Path: path} }

// String returns "127.0.0.1:80", "[::1]:80", "unix:/tmp/s" or "<none>".
func (a Addr) String() string {
	switch a.Family {
	case FamilyInet4, FamilyInet6:
		return a.IP.String()
	case FamilyUnix:
		return "unix:" + a.Path
	}
	return "<none>"
}

// IsZero reports whether a is no address.
func (a Addr) IsZero() bool { return a.Family == 0 }
