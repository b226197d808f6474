package equiv

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind (Block's).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
