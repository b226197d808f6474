//go:build !unix

package blitz_test

import (
	"os"
	"testing"
)

// No signals to send to oneself here: the tests that need them skip.
var sigUSR1, sigUSR2, sigHUP os.Signal

func requireSignals(t testing.TB) {
	t.Helper()
	t.Skip("cannot send signals to the test process on this platform")
}

func raise(t testing.TB, _ os.Signal) {
	t.Helper()
	t.Skip("cannot send signals to the test process on this platform")
}
