package deadlock

import (
	"testing"

	"github.com/blitz-go/blitz/tests/internal/gentest"
)

// TestGeneratedIsFresh: deadlock_async.go is what blitzgen writes from deadlock.go
// now, so that the tests run the generator as it is.
func TestGeneratedIsFresh(t *testing.T) { gentest.CheckFresh(t, "deadlock_async.go") }
