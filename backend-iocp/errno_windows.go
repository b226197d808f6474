//go:build windows

package iocp

import (
	"errors"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

// sentinel returns the backend sentinel for a Windows error code (a Win32
// ERROR_ code, a Winsock WSAE code, or an NTSTATUS already converted to a
// Win32 code): the one conversion of an OS error code in this package. Codes
// without a sentinel of their own map to backend.ErrIO.
func sentinel(errno windows.Errno) error {
	switch errno {
	case windows.ERROR_OPERATION_ABORTED, windows.WSAEINTR:
		return backend.ErrCanceled
	case windows.ERROR_NOT_FOUND:
		return backend.ErrNotFound
	case windows.ERROR_FILE_NOT_FOUND, windows.ERROR_PATH_NOT_FOUND:
		return backend.ErrNotExist
	case windows.ERROR_INVALID_HANDLE, windows.WSAENOTSOCK, windows.WSAEBADF:
		return backend.ErrClosed
	case windows.ERROR_INVALID_PARAMETER, windows.WSAEINVAL:
		return backend.ErrInvalid
	case windows.WSAEOPNOTSUPP, windows.WSAEAFNOSUPPORT, windows.WSAEPROTONOSUPPORT,
		windows.WSAENOPROTOOPT, windows.WSAESOCKTNOSUPPORT, windows.WSAEPFNOSUPPORT,
		windows.ERROR_NOT_SUPPORTED, windows.ERROR_CALL_NOT_IMPLEMENTED:
		return backend.ErrUnsupported
	case windows.WSAECONNRESET, windows.WSAENETRESET, windows.ERROR_NETNAME_DELETED:
		return backend.ErrConnReset
	case windows.WSAECONNREFUSED, windows.ERROR_CONNECTION_REFUSED, windows.ERROR_PORT_UNREACHABLE:
		return backend.ErrConnRefused
	case windows.WSAECONNABORTED, windows.ERROR_CONNECTION_ABORTED,
		windows.ERROR_REQUEST_ABORTED:
		return backend.ErrConnAborted
	case windows.WSAESHUTDOWN, windows.ERROR_BROKEN_PIPE, windows.ERROR_NO_DATA:
		return backend.ErrBrokenPipe
	case windows.WSAENOTCONN:
		return backend.ErrNotConnected
	case windows.WSAETIMEDOUT, windows.ERROR_SEM_TIMEOUT:
		return backend.ErrTimedOut
	case windows.WSAEADDRINUSE:
		return backend.ErrAddrInUse
	case windows.WSAEADDRNOTAVAIL:
		return backend.ErrAddrNotAvailable
	case windows.WSAENETUNREACH, windows.WSAEHOSTUNREACH, windows.WSAENETDOWN, windows.WSAEHOSTDOWN,
		windows.ERROR_NETWORK_UNREACHABLE, windows.ERROR_HOST_UNREACHABLE:
		return backend.ErrUnreachable
	case windows.WSAEMFILE, windows.ERROR_TOO_MANY_OPEN_FILES:
		return backend.ErrTooManyFiles
	case windows.WSAENOBUFS, windows.ERROR_NOT_ENOUGH_MEMORY, windows.ERROR_OUTOFMEMORY,
		windows.ERROR_NO_SYSTEM_RESOURCES:
		return backend.ErrNoMemory
	case windows.WSAEACCES, windows.ERROR_ACCESS_DENIED, windows.ERROR_SHARING_VIOLATION:
		return backend.ErrPermission
	case windows.ERROR_FILE_EXISTS, windows.ERROR_ALREADY_EXISTS:
		return backend.ErrFileExists
	case windows.WSAEMSGSIZE, windows.ERROR_MORE_DATA:
		return backend.ErrMessageSize
	}
	return backend.ErrIO
}

// sysError converts err, as a Windows call returned it, to the backend's
// form: nil stays nil; a windows.Errno becomes an *backend.Error naming op,
// except the cancellation codes, which are the bare backend.ErrCanceled (the
// result of this package's own CancelIoEx); anything else is wrapped with
// backend.ErrIO.
func sysError(op string, err error) error {
	if err == nil {
		return nil
	}
	var errno windows.Errno
	if !errors.As(err, &errno) {
		return backend.NewError(op, backend.ErrIO, err)
	}
	return errnoError(op, errno)
}

// errnoError is sysError for a bare code.
func errnoError(op string, errno windows.Errno) error {
	if errno == 0 {
		return nil
	}
	s := sentinel(errno)
	if s == backend.ErrCanceled {
		return backend.ErrCanceled
	}
	return backend.NewError(op, s, errno)
}
