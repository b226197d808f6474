//go:build windows

package iocp

import (
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Calls golang.org/x/sys/windows v0.47.0 lacks.
var (
	modkernel32                     = windows.NewLazySystemDLL("kernel32.dll")
	procGetQueuedCompletionStatusEx = modkernel32.NewProc("GetQueuedCompletionStatusEx")
)

// overlappedEntry is OVERLAPPED_ENTRY, filled by GetQueuedCompletionStatusEx.
// Overlapped points at the first field of a record the table keeps alive
// (or is nil for the wake and kick packets).
type overlappedEntry struct {
	Key        uintptr
	Overlapped *windows.Overlapped
	Internal   uintptr // the NTSTATUS of the operation
	Bytes      uint32
}

// getQueuedCompletionStatusEx dequeues up to len(entries) packets, waiting
// up to ms milliseconds (windows.INFINITE: forever). A timeout is (0, nil).
func getQueuedCompletionStatusEx(port windows.Handle, entries []overlappedEntry, ms uint32) (int, error) {
	var n uint32
	r, _, e := syscall.SyscallN(procGetQueuedCompletionStatusEx.Addr(),
		uintptr(port), uintptr(unsafe.Pointer(&entries[0])), uintptr(len(entries)),
		uintptr(unsafe.Pointer(&n)), uintptr(ms), 0)
	if r == 0 {
		if e == windows.WAIT_TIMEOUT {
			return 0, nil
		}
		if e == 0 {
			e = windows.ERROR_INVALID_HANDLE
		}
		return 0, e
	}
	return int(n), nil
}

// connectExFunc is the address of ConnectEx, which Winsock only hands out
// through WSAIoctl(SIO_GET_EXTENSION_FUNCTION_POINTER).
var connectExFunc struct {
	once sync.Once
	addr uintptr
	err  error
}

// loadConnectEx looks ConnectEx up once, through socket s.
func loadConnectEx(s windows.Handle) error {
	connectExFunc.once.Do(func() {
		var n uint32
		guid := windows.WSAID_CONNECTEX
		connectExFunc.err = windows.WSAIoctl(s, windows.SIO_GET_EXTENSION_FUNCTION_POINTER,
			(*byte)(unsafe.Pointer(&guid)), uint32(unsafe.Sizeof(guid)),
			(*byte)(unsafe.Pointer(&connectExFunc.addr)), uint32(unsafe.Sizeof(connectExFunc.addr)),
			&n, nil, 0)
	})
	return connectExFunc.err
}

// connectEx starts an overlapped connect of s to the raw address sa (which,
// like ov, lives in a record until the completion).
func connectEx(s windows.Handle, sa *windows.RawSockaddrAny, salen int32, ov *windows.Overlapped) error {
	r, _, e := syscall.SyscallN(connectExFunc.addr, uintptr(s), uintptr(unsafe.Pointer(sa)), uintptr(salen),
		0, 0, 0, uintptr(unsafe.Pointer(ov)))
	if r == 0 {
		if e == 0 {
			return windows.ERROR_INVALID_PARAMETER
		}
		return e
	}
	return nil
}

// fionbio is the FIONBIO ioctl code (_IOW('f', 126, u_long)).
const fionbio = 0x8004667e

// setNonblock puts socket s in non-blocking mode (on) or back in blocking
// mode. Overlapped operations are unaffected by the mode; it matters for
// the synchronous recv that follows a SelectBuffer recv's zero-byte read.
func setNonblock(s windows.Handle, on bool) error {
	v := uint32(0)
	if on {
		v = 1
	}
	var n uint32
	return windows.WSAIoctl(s, fionbio, (*byte)(unsafe.Pointer(&v)), 4, nil, 0, &n, nil, 0)
}
