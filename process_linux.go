//go:build linux

package blitz

import (
	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// openPidfd returns a pidfd of the child pid, for a wait that the backend
// polls (it becomes readable when the child exits). The child is not
// reaped yet, so pid cannot name another process. ok is false when the
// kernel refuses (ENOSYS before Linux 5.3, EPERM under some seccomp
// filters): the wait then runs on the blocking pool.
func openPidfd(pid int) (backend.FD, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return backend.InvalidFD, false
	}
	return backend.FD(fd), true
}
