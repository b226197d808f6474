package scheduler_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every
// scheduler a test starts is shut down (see newEnv), so its workers and its
// shutdown goroutine must all have returned.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
