package dumpwarn

import (
	"testing"

	"github.com/blitz-go/blitz/tests/internal/gentest"
)

// TestGeneratedIsFresh: waits_async.go is what blitzgen writes from waits.go
// now, so that the tests run the generator as it is.
func TestGeneratedIsFresh(t *testing.T) { gentest.CheckFresh(t, "waits_async.go") }
