package asyncbench

import (
	"testing"

	"github.com/blitz-go/blitz/tests/internal/gentest"
)

// TestGeneratedIsFresh: funcs_async.go is what blitzgen writes from funcs.go
// now, so that the tests run the generator as it is.
func TestGeneratedIsFresh(t *testing.T) { gentest.CheckFresh(t, "funcs_async.go") }
