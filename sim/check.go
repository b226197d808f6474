package sim

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
)

// The flags of a test binary that uses Check. A failing run prints the
// command that replays it with them.
var (
	flagSeed   = flag.String("sim.seed", "", "sim: run only this seed (replay a failure)")
	flagSeeds  = flag.Int("sim.seeds", 0, "sim: seeds per Check (0: the test's own count)")
	flagFirst  = flag.Uint64("sim.first", 1, "sim: the first seed a Check runs")
	flagTrace  = flag.Bool("sim.trace", false, "sim: keep and print the whole trace of each failing run")
	flagShrink = flag.Int("sim.shrink", 0, "sim: after a failure, run this many more seeds and report the failing run with the fewest steps")
	flagTwice  = flag.Bool("sim.twice", false, "sim: run every seed twice and fail when the two traces differ (a determinism check)")
)

// Check runs the simulation body under seeds seeds (flags: -sim.seeds,
// -sim.first, -sim.seed), each in a subtest "seed=N" of its own, in
// parallel (as many at once as -test.parallel allows, GOMAXPROCS by
// default), each inside a testing/synctest bubble with a World made from
// opts and the seed. body sets the world up (hosts, their programs, the
// faults) and drives it, usually by blocking on a client's future; it
// fails its *testing.T as any test does. A failing seed prints its trace's
// tail (whole with -sim.trace), its trace hash and the command that
// replays it. With Options.Twice (or -sim.twice) every seed runs twice and
// fails when its two traces differ. Before reporting, a failing seed is run
// a second time: a
// run that does not repeat itself (the program starts goroutines, reads
// real time outside the bubble, or draws unseeded random numbers) is
// reported as such, since its seed cannot replay it.
func Check(t *testing.T, opts Options, seeds int, body func(t *testing.T, w *World)) {
	t.Helper()
	list := seedList(seeds)
	if *flagTrace {
		opts.Trace = true
	}
	for _, seed := range list {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			if len(list) > 1 {
				t.Parallel()
			}
			o := opts
			o.Seed = seed
			steps, hash, failed := runSeed(t, o, body)
			if failed && *flagShrink > 0 {
				shrink(t, o, steps, body)
			}
			if !failed && (*flagTwice || opts.Twice) {
				if again := rerunHash(t, o, body); again != hash {
					t.Errorf("sim: seed %d ran twice gave trace hashes %#x and %#x: the run is not deterministic (goroutines of the program, real time or unseeded randomness)", seed, hash, again)
				}
			}
		})
	}
}

// seedList is the seeds a Check runs.
func seedList(seeds int) []uint64 {
	if s := strings.TrimSpace(*flagSeed); s != "" {
		n, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			panic(fmt.Sprintf("sim: -sim.seed=%q: %v", s, err))
		}
		return []uint64{n}
	}
	if *flagSeeds > 0 {
		seeds = *flagSeeds
	}
	list := make([]uint64, max(seeds, 1))
	for i := range list {
		list[i] = *flagFirst + uint64(i)
	}
	return list
}

// runSeed runs body on a world of o in a bubble of t's, reports a failure
// with its replay, and returns the run's steps, its trace hash and whether
// it failed.
func runSeed(t *testing.T, o Options, body func(t *testing.T, w *World)) (steps int, hash uint64, failed bool) {
	var trace []string
	// In a subtest of its own: a failure's FailNow ends that subtest's
	// goroutine (and the bubble's), not this one, which reports it.
	t.Run("run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := New(o)
			defer func() {
				w.Close()
				steps, hash, trace, failed = w.steps, w.TraceHash(), w.Trace(), t.Failed()
			}()
			body(t, w)
		})
	})
	if !failed {
		return steps, hash, false
	}
	again := rerunHash(t, o, body)
	t.Logf("sim: seed %d failed after %d steps, virtual trace hash %#x, strategy %s", o.Seed, steps, hash, o.nameOr())
	if again != hash {
		t.Logf("sim: the same seed ran again gave trace hash %#x: this run is not deterministic (goroutines of the program, real time or unseeded randomness), so its seed may not replay it", again)
	}
	t.Logf("sim: last events:\n%s", strings.Join(trace, "\n"))
	t.Logf("sim: replay: %s", replayCommand(t, o.Seed))
	return steps, hash, true
}

// rerunHash runs body once more with o, in a subtest "again" of t, and
// returns its trace hash. A deterministic run fails again, the same way.
func rerunHash(t *testing.T, o Options, body func(t *testing.T, w *World)) uint64 {
	var hash uint64
	t.Run("again", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := New(o)
			defer func() { w.Close(); hash = w.TraceHash() }()
			body(t, w)
		})
	})
	return hash
}

// shrink runs more seeds after a failure (-sim.shrink), each in a subtest,
// and reports the failing one with the fewest steps.
func shrink(t *testing.T, o Options, steps int, body func(t *testing.T, w *World)) {
	best, bestSteps := o.Seed, steps
	for i := range *flagShrink {
		s := o
		s.Seed = o.Seed + 1_000_003*uint64(i+1)
		t.Run("shrink/seed="+strconv.FormatUint(s.Seed, 10), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := New(s)
				defer func() {
					w.Close()
					if t.Failed() && w.steps < bestSteps {
						best, bestSteps = s.Seed, w.steps
					}
				}()
				body(t, w)
			})
		})
	}
	t.Logf("sim: shortest failing run among %d more seeds: seed %d, %d steps; replay: %s", *flagShrink, best, bestSteps, replayCommand(t, best))
}

// replayCommand is the command that runs seed of t's test alone, with its
// whole trace.
func replayCommand(t *testing.T, seed uint64) string {
	name := t.Name()
	if i := strings.Index(name, "/seed="); i >= 0 {
		name = name[:i]
	}
	dir, _ := os.Getwd()
	return fmt.Sprintf("cd %s && go test -count=1 -run '^%s$' -args -sim.seed=%d -sim.trace", dir, strings.ReplaceAll(name, "/", "$/^"), seed)
}

// nameOr names the strategy, nil meaning Random.
func (o Options) nameOr() string { return strategyName(o.Strategy) }

func strategyName(s Strategy) string {
	if s == nil {
		return Random().name()
	}
	return s.name()
}

// Close shuts down every host's runtime (their tasks end with
// blitz.ErrShutdown, their deferred calls run), so that the bubble ends
// with no goroutine. Check calls it after each run.
func (w *World) Close() {
	for _, h := range w.hosts {
		if rt := h.rt; rt != nil {
			_ = rt.Shutdown(context.Background())
		}
	}
}
