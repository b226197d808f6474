package wsqueuelin_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every
// history joins the clients it starts.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
