//go:build windows

package blitz

import (
	"os"
	"syscall"
)

// The signals of Terminate and Hangup: Go delivers SIGTERM for a console's
// close, logoff and shutdown events, and never SIGHUP.
var (
	sigTerminate os.Signal = syscall.SIGTERM
	sigHangup    os.Signal
)
