package httpserver_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, or, when the benchmarks re-execute the test
// binary as a child process, the child's part (see bench_test.go).
func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "loadgen":
		os.Exit(loadgenMain())
	case "server":
		os.Exit(rssServerMain())
	}
	goleak.VerifyTestMain(m)
}
