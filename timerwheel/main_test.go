package timerwheel_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every
// Service the tests start must be closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
