//go:build unix

package twintest

import "syscall"

// fdLimit is the process's soft limit of open descriptors.
func fdLimit() (int, bool) {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0, false
	}
	return int(rl.Cur), true
}
