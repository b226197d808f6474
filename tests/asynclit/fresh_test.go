package asynclit

import (
	"testing"

	"github.com/blitz-go/blitz/tests/internal/gentest"
)

// TestGeneratedIsFresh: lit_async.go is what blitzgen writes from lit.go
// now, so that the tests run the generator as it is.
func TestGeneratedIsFresh(t *testing.T) { gentest.CheckFresh(t, "lit_async.go") }
