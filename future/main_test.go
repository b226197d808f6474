package future_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: Block and
// the goroutines that wake it must all return.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
