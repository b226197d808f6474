package header_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every worker
// and waker a stress test starts must have exited.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
