package syncprim

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every
// blocked goroutine and every scheduler a test starts must be gone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
