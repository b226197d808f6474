package wsqueue_test

// The leak check: TestMain fails the run if any test leaves a goroutine
// behind (every stress and interleaving test must join the stealers it
// starts). It needs only the standard library, so that the module has no
// requirements at all; it follows go.uber.org/goleak's rules for which
// goroutines belong to the testing package and the runtime.

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// leakWait is how long the check waits for the tests' goroutines to end
// after the last test returns: long enough for a goroutine that was told to
// stop to be scheduled on a loaded machine.
const leakWait = 5 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(leakWait); len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d goroutine(s) still running %v after the tests:\n\n%s\n",
				len(leaked), leakWait, strings.Join(leaked, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines polls, with growing pauses, until no goroutine but the
// caller and those of the testing package and the runtime remains, or until
// wait has passed; it returns the stacks of those that remain.
func leakedGoroutines(wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		leaked := otherGoroutines()
		if len(leaked) == 0 || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// otherGoroutines returns the stack of every goroutine except the caller and
// those that ignorable accepts.
func otherGoroutines() []string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// The caller's stack comes first; the others follow, one per
	// blank-line-separated block.
	var out []string
	for _, g := range strings.Split(strings.TrimSpace(string(buf)), "\n\n")[1:] {
		if !ignorable(g) {
			out = append(out, g)
		}
	}
	return out
}

// ignorable reports whether the goroutine whose stack is g belongs to the
// testing package, the runtime or os/signal rather than to a test: the rules
// of go.uber.org/goleak, plus goroutines the runtime itself starts (visible
// under GOTRACEBACK=system).
func ignorable(g string) bool {
	lines := strings.Split(g, "\n")
	// The header: "goroutine 7 [chan receive, 2 minutes]:".
	state := lines[0]
	if i := strings.IndexByte(state, '['); i >= 0 {
		state = state[i+1:]
	}
	state, _, _ = strings.Cut(state, "]")
	var first, creator string
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "\t"):
			// A file:line.
		case strings.HasPrefix(l, "created by "):
			creator = strings.TrimPrefix(l, "created by ")
		default:
			fn := l
			if i := strings.LastIndexByte(fn, '('); i > 0 {
				fn = fn[:i]
			}
			if fn == "runtime.ensureSigM" {
				return true // started by signal.Notify
			}
			if first == "" && (!strings.HasPrefix(fn, "runtime.") || fn == "runtime.goexit") {
				first = fn
			}
		}
	}
	switch first {
	case "testing.RunTests", "testing.(*T).Run", "testing.(*T).Parallel", "testing.runFuzzing", "testing.runFuzzTests":
		// The testing package's own goroutines wait on a channel.
		return strings.HasPrefix(state, "chan receive")
	case "os/signal.signal_recv", "os/signal.loop":
		return true // started by importing os/signal
	case "runtime.goexit":
		return strings.HasPrefix(state, "syscall") // cgo's background thread
	}
	return strings.HasPrefix(creator, "runtime.")
}

// TestLeakCheckSeesGoroutines makes sure the leak check is not vacuous: it
// reports a goroutine a test left blocked, naming its function, and stops
// reporting it once it has returned.
func TestLeakCheckSeesGoroutines(t *testing.T) {
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go blockedForLeakCheck(started, release, done)
	<-started
	found := false
	for _, g := range leakedGoroutines(0) {
		found = found || strings.Contains(g, "blockedForLeakCheck")
	}
	close(release)
	<-done
	if !found {
		t.Errorf("the leak check missed a blocked goroutine; it saw:\n%s", strings.Join(otherGoroutines(), "\n\n"))
	}
	for _, g := range leakedGoroutines(leakWait) {
		if strings.Contains(g, "blockedForLeakCheck") {
			t.Errorf("the leak check still reports a goroutine that returned:\n%s", g)
		}
	}
}

// blockedForLeakCheck closes started, blocks until release is closed, then
// closes done.
func blockedForLeakCheck(started chan<- struct{}, release <-chan struct{}, done chan<- struct{}) {
	close(started)
	<-release
	close(done)
}
