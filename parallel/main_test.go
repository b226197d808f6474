package parallel_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/blitz-go/blitz/parallel"
	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every pool a
// test makes must be closed, and the Default pool is closed at the end.
func TestMain(m *testing.M) {
	code := m.Run()
	parallel.CloseDefault()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
