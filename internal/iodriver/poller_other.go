//go:build !unix

package iodriver

import "os"

// pollFile returns nil: the rings of this system are not polled through Go's
// poller (IOCP's Wait blocks instead).
func pollFile(int) *os.File { return nil }
