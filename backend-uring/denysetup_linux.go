//go:build linux

package uring

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// DenySetupForTest is for tests, of this module and of others (the runtime
// tests its fallback to epoll with it): it installs, for every thread of the
// calling process and irrevocably, a seccomp filter under which
// io_uring_setup fails with EPERM, as in a container whose seccomp profile
// forbids io_uring. Call it only in a child process made for the purpose
// (re-exec the test binary). It returns an error wrapping
// backend.ErrUnsupported on architectures other than amd64 and arm64.
func DenySetupForTest() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return backend.NewError("seccomp", backend.ErrUnsupported, fmt.Errorf("GOARCH %s", runtime.GOARCH))
	}
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: int nr at offset 0, __u32 arch at offset 4.
	prog := []unix.SockFilter{
		{Code: ldAbs, K: 4},
		{Code: jeq, Jt: 0, Jf: 3, K: arch},
		{Code: ldAbs, K: 0},
		{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_IO_URING_SETUP},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// no_new_privs is per thread; TSYNC copies it with the filter to the
	// other threads, so both calls must be made on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return backend.NewError("prctl", backend.ErrPermission, err)
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return backend.NewError("seccomp", backend.ErrPermission, errno)
	}
	return nil
}
