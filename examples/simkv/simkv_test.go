package simkv_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blitz-go/blitz/sim"
)

// runOnce runs sc at seed in a bubble of its own and returns the verdict.
func runOnce(t *testing.T, seed uint64, sc scenario) verdict {
	t.Helper()
	var v verdict
	synctest.Test(t, func(t *testing.T) {
		w := sim.New(sim.Options{Seed: seed})
		defer func() {
			// After the shutdown, as sim.Check takes them: the hash
			// covers its events too.
			w.Close()
			v.steps, v.hash = w.Steps(), w.TraceHash()
		}()
		var err error
		if v, err = simulate(w, sc); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	})
	return v
}

// seeds is n, or n/25 (at least 2) with -short.
func seeds(n int) int {
	if testing.Short() {
		return max(n/25, 2)
	}
	return n
}

// virtual is how long the clients of a run work: 10 s, or 4 s with -short
// (the race detector slows a run down some thirtyfold).
func virtual() time.Duration {
	if testing.Short() {
		return 4 * time.Second
	}
	return 10 * time.Second
}

// checkStore runs sc under sim.Check with opts for n seeds: each must be
// linearizable.
func checkStore(t *testing.T, opts sim.Options, sc scenario, n int) {
	sim.Check(t, opts, n, func(t *testing.T, w *sim.World) {
		v, err := simulate(w, sc)
		if err != nil {
			t.Fatal(err)
		}
		if v.failed() {
			t.Fatalf("seed %d: the history is not linearizable: %s", w.Seed(), v.report())
		}
		if v.puts == 0 {
			t.Fatalf("seed %d: no PUT succeeded: %v", w.Seed(), v)
		}
	})
}

// TestKVLinearizable: the correct store passes every seed, with faults.
func TestKVLinearizable(t *testing.T) {
	checkStore(t, sim.Options{}, scenario{Faults: true, Duration: virtual()}, seeds(100))
}

// TestKVLinearizablePCT: the same under the PCT strategy, which favours
// long runs of one task and a few priority changes.
func TestKVLinearizablePCT(t *testing.T) {
	if testing.Short() {
		t.Skip("more seeds without -short")
	}
	checkStore(t, sim.Options{Strategy: sim.PCT(3, 20_000)}, scenario{Faults: true, Duration: virtual()}, 50)
}

// TestKVAckBeforeSync replays a seed of the buggy store (it is what the
// replay command of TestSimFindsTheBug runs); without -sim.seed it is
// skipped, since the buggy store fails most seeds.
func TestKVAckBeforeSync(t *testing.T) {
	if f := flag.Lookup("sim.seed"); f == nil || f.Value.String() == "" {
		t.Skip("replays one seed of the buggy store: -args -sim.seed=N")
	}
	checkStore(t, sim.Options{}, bugScenario, 1)
}

// bugScenario is the run that TestSimFindsTheBug searches.
var bugScenario = scenario{Bug: true, Faults: true, Duration: 10 * time.Second}

// TestSimFindsTheBug runs the store with AckBeforeSync seed after seed
// until one fails the linearizability check, then replays that seed: the
// same trace hash, the same failure.
func TestSimFindsTheBug(t *testing.T) {
	limit := uint64(seeds(200))
	var found uint64
	var first verdict
	for seed := uint64(1); seed <= limit; seed++ {
		if v := runOnce(t, seed, bugScenario); v.failed() {
			found, first = seed, v
			t.Logf("seed %d failed, run %d of at most %d: %s", seed, seed, limit, v.report())
			break
		}
	}
	if found == 0 {
		t.Fatalf("the bug was not found in %d seeds", limit)
	}
	again := runOnce(t, found, bugScenario)
	if again.hash != first.hash || again.steps != first.steps {
		t.Fatalf("seed %d replayed: trace hash %#x after %d steps, first run %#x after %d", found, again.hash, again.steps, first.hash, first.steps)
	}
	if !again.failed() || !sameOps(again, first) {
		t.Fatalf("seed %d replayed: %v, first run %v", found, again, first)
	}
	t.Logf("replayed seed %d: the same trace hash %#x and the same failure", found, again.hash)
	if testing.Verbose() {
		// The view outlives the test, for the reader of -v output to
		// open; a run without -v, which would not print its path, leaves
		// no file behind.
		html := filepath.Join(os.TempDir(), fmt.Sprintf("simkv-seed-%d.html", found))
		if err := again.history.Visualize(html); err != nil {
			t.Logf("visualization: %v", err)
		} else {
			t.Logf("porcupine's view of the history: %s", html)
		}
	}
	t.Logf("replay: %s", replayCommand("TestKVAckBeforeSync", found))
}

// sameOps reports whether two verdicts name the same operations.
func sameOps(a, b verdict) bool {
	if len(a.bad) != len(b.bad) {
		return false
	}
	for i := range a.bad {
		if a.bad[i] != b.bad[i] {
			return false
		}
	}
	return true
}

// replayCommand is the command that replays seed of the test named test,
// as sim.Check prints it.
func replayCommand(test string, seed uint64) string {
	dir, _ := os.Getwd()
	return fmt.Sprintf("cd %s && go test -count=1 -run '^%s$' -args -sim.seed=%d -sim.trace", dir, test, seed)
}

// TestSameSeedSameRun: a seed fixes the run, faults and all.
func TestSameSeedSameRun(t *testing.T) {
	sc := scenario{Faults: true, Duration: virtual() / 2}
	list := []uint64{1, 2, 3}
	if testing.Short() {
		list = list[:2]
	}
	for _, seed := range list {
		a, b := runOnce(t, seed, sc), runOnce(t, seed, sc)
		if a.hash != b.hash || a.steps != b.steps || a.String() != b.String() {
			t.Fatalf("seed %d ran twice: %v and %v", seed, a, b)
		}
	}
}
