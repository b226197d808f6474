package websocket

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines; with WS_IDLE_CHILD set the test
// binary is the client process of BenchmarkIdleConnMemory instead.
func TestMain(m *testing.M) {
	if os.Getenv(idleChildEnv) != "" {
		if err := runIdleClients(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
