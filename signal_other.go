//go:build !unix && !windows

package blitz

import "os"

// The signals of Terminate and Hangup: none on this platform.
var sigTerminate, sigHangup os.Signal
