//go:build linux

package peers

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives the tests: every
// server's Stop must end what it started. Ignored: the peers' own
// process-wide goroutines, which no Stop of theirs ends (gnet's default
// ants pool, fasthttp's Date-header clock and its worker pool's cleaner,
// which sleeps out its period after Shutdown, and the task pool that
// nbio's websocket package starts when it is loaded).
//
// With PEERS_TEST_CHILD=1 the test binary is a child process of the
// tests (see RunChild) instead: its arguments name the child.
// PEERS_TEST_CHILD=fail-dial is the same, except that a dial child exits
// at once with status 3, the way a crashing client would.
func TestMain(m *testing.M) {
	if c := os.Getenv("PEERS_TEST_CHILD"); c != "" {
		if c == "fail-dial" && len(os.Args) > 1 && os.Args[1] == "dial" {
			os.Exit(3)
		}
		if err := RunChild(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreTopFunction("github.com/lesismal/nbio/taskpool.New.func3"),
	)
}
