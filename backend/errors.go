package backend

import (
	"errors"
	"fmt"
)

// Sentinel errors. A backend converts an operating-system error code to one
// of these once, at its boundary, and wraps it with the code in an *Error, so
// that callers test errors.Is(err, backend.ErrConnReset) on every platform
// and errors.Is(err, syscall.ECONNRESET) still works where the code is one.
var (
	// ErrClosed: the backend was closed (Submit, Wait after the drain), or
	// an operation used a descriptor closed under it (EBADF).
	ErrClosed = errors.New("backend: closed")
	// ErrBusy: a second goroutine called Wait while one was waiting.
	ErrBusy = errors.New("backend: Wait called concurrently")
	// ErrInvalid: an Op or argument the contract does not allow (an unknown
	// Kind, a nil Target, a Multishot flag on a Recv, EINVAL).
	ErrInvalid = errors.New("backend: invalid argument")
	// ErrUnsupported: a valid request this backend or platform cannot serve
	// (a Unix socket where there are none, an option the OS lacks).
	ErrUnsupported = errors.New("backend: not supported")
	// ErrCanceled: the operation was cancelled (a Cancel op, a Close op on
	// its descriptor, or Close of the backend) before it completed.
	ErrCanceled = errors.New("backend: operation canceled")
	// ErrTimeout: a Timeout op expired, or an op's linked timeout
	// (Op.Timeout) expired before it completed.
	ErrTimeout = errors.New("backend: timeout")
	// ErrNotFound: a Cancel op found its Target not in flight (it already
	// completed, or was never submitted to this backend).
	ErrNotFound = errors.New("backend: operation not found")
	// ErrWouldBlock: TrySend or TryRecv found the socket not ready; submit
	// the op instead.
	ErrWouldBlock = errors.New("backend: operation would block")
	// ErrExists: a buffer group registered twice.
	ErrExists = errors.New("backend: already exists")
	// ErrNoBuffers: a Recv with SelectBuffer found its buffer group empty
	// (ENOBUFS); release buffers and submit again.
	ErrNoBuffers = errors.New("backend: no buffers in group")

	// ErrConnReset: the peer reset the connection (ECONNRESET,
	// WSAECONNRESET).
	ErrConnReset = errors.New("backend: connection reset by peer")
	// ErrConnRefused: nobody listens at the address (ECONNREFUSED).
	ErrConnRefused = errors.New("backend: connection refused")
	// ErrConnAborted: the connection was aborted before accept took it, or
	// by the local stack (ECONNABORTED).
	ErrConnAborted = errors.New("backend: connection aborted")
	// ErrBrokenPipe: a send on a connection whose peer has gone (EPIPE,
	// WSAESHUTDOWN).
	ErrBrokenPipe = errors.New("backend: broken pipe")
	// ErrNotConnected: the socket is not connected (ENOTCONN).
	ErrNotConnected = errors.New("backend: not connected")
	// ErrTimedOut: the network stack gave up (ETIMEDOUT, a connect nobody
	// answered). Distinct from ErrTimeout, which is this package's timers.
	ErrTimedOut = errors.New("backend: connection timed out")
	// ErrAddrInUse: the local address is taken (EADDRINUSE).
	ErrAddrInUse = errors.New("backend: address in use")
	// ErrAddrNotAvailable: the local address is not this host's
	// (EADDRNOTAVAIL).
	ErrAddrNotAvailable = errors.New("backend: address not available")
	// ErrUnreachable: no route to the network or host (ENETUNREACH,
	// EHOSTUNREACH).
	ErrUnreachable = errors.New("backend: network or host unreachable")
	// ErrTooManyFiles: the process or the system is out of descriptors
	// (EMFILE, ENFILE); an accept loop backs off and keeps serving.
	ErrTooManyFiles = errors.New("backend: too many open files")
	// ErrNoMemory: the kernel is out of buffers (ENOMEM, ENOBUFS outside
	// buffer selection).
	ErrNoMemory = errors.New("backend: out of kernel memory")
	// ErrPermission: EACCES, EPERM.
	ErrPermission = errors.New("backend: permission denied")
	// ErrNotExist: no such file (ENOENT on open).
	ErrNotExist = errors.New("backend: no such file or directory")
	// ErrFileExists: the file exists (EEXIST with OpenExclusive).
	ErrFileExists = errors.New("backend: file exists")
	// ErrMessageSize: a datagram larger than the socket allows (EMSGSIZE).
	ErrMessageSize = errors.New("backend: message too long")
	// ErrIO: any other operating-system error; the *Error carries its code.
	ErrIO = errors.New("backend: I/O error")
)

// Error is an operating-system error converted at a backend's boundary: Op
// names the operation ("recv", "accept", "socket"), Err is one of the
// sentinels above, and Sys is the code as the OS gave it (a syscall.Errno on
// Unix and on Windows). errors.Is matches either.
type Error struct {
	Op  string
	Err error
	Sys error
}

// Error formats the error as "recv: backend: connection reset by peer
// (connection reset by peer)".
func (e *Error) Error() string {
	if e.Sys == nil {
		return e.Op + ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s: %v (%v)", e.Op, e.Err, e.Sys)
}

// Unwrap returns the sentinel and the OS code, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Sys == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Sys}
}

// Timeout reports whether the error is a timeout (ErrTimeout or
// ErrTimedOut), in the manner of net.Error.
func (e *Error) Timeout() bool {
	return errors.Is(e.Err, ErrTimeout) || errors.Is(e.Err, ErrTimedOut)
}

// NewError wraps sentinel and the OS code sys for the operation op. A
// backend calls it once per failed operation, at its boundary.
func NewError(op string, sentinel, sys error) *Error {
	return &Error{Op: op, Err: sentinel, Sys: sys}
}
