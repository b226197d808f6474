//go:build unix

package blitz_test

import "syscall"

// fdLimit returns the process's descriptor limit (Go raises the soft limit
// to the hard one at start-up), or 0 if unknown.
func fdLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return int(min(l.Cur, 1<<30))
}
