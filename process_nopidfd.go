//go:build !linux

package blitz

import "github.com/blitz-go/blitz/backend"

// openPidfd reports that this system has no pidfd: waits run on the
// blocking pool.
func openPidfd(int) (backend.FD, bool) { return backend.InvalidFD, false }
