package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz/examples/internal/echotest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEchoServer runs the plain-Go server through the test every echo server
// passes.
func TestEchoServer(t *testing.T) { echotest.Server(t, serve) }

// TestEchoCountsConnectionsOpenAtStop: see echotest.CountsConnectionsOpenAtStop.
func TestEchoCountsConnectionsOpenAtStop(t *testing.T) {
	echotest.CountsConnectionsOpenAtStop(t, serve)
}
