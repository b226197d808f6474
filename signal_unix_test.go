//go:build unix

package blitz_test

import (
	"os"
	"syscall"
	"testing"
)

// The signals the tests send to themselves. SIGUSR1 and SIGUSR2 are
// harmless to a Go program that does not listen for them; SIGHUP would end
// it, so it is sent only while a listener is sure to take it.
var sigUSR1, sigUSR2, sigHUP os.Signal = syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP

// requireSignals skips a test on platforms where a process cannot signal
// itself.
func requireSignals(testing.TB) {}

// raise sends sig to the test process. Call it only while a listener for
// sig is registered.
func raise(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), sig.(syscall.Signal)); err != nil {
		t.Fatalf("kill %v: %v", sig, err)
	}
}
