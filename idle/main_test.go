package idle_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every worker
// a test starts must have returned from Park and exited.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
