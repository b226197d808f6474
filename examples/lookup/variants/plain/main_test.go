package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz/examples/lookup/internal/lookuptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLookupServer runs the plain-Go server through the test every variant
// passes.
func TestLookupServer(t *testing.T) { lookuptest.Run(t, serve) }
