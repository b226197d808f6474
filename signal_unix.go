//go:build unix

package blitz

import (
	"os"
	"syscall"
)

// The signals of Terminate and Hangup.
var sigTerminate, sigHangup os.Signal = syscall.SIGTERM, syscall.SIGHUP
