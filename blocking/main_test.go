package blocking_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every test
// shuts its pools down, and a Shutdown that returned nil must leave no
// worker.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
