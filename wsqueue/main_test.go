package wsqueue_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every stress
// and interleaving test must join the stealers it starts.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
