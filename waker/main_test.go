package waker_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every
// waiting goroutine of the Signal and stress tests must return.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
