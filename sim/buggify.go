package sim

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// Buggify reports whether the calling code should take a rare path it
// wants tested: a slow branch, an early timeout, a retry, a smaller
// buffer. Outside a simulation it is always false, so the call can stay in
// production code. Under a simulation each call site (the caller's file
// and line) is enabled for the whole run with probability 1/4, decided at
// its first call from the run's seed, and an enabled site fires at each
// call with probability 1/4: rare paths are taken often, but not so often
// that every run takes the same ones. cx is the Context of the task's poll
// (future.Cx() in an async function).
func Buggify(cx *future.Context) bool {
	w := worldOf(cx)
	if w == nil {
		return false
	}
	pc, file, line, _ := goruntime.Caller(1)
	on, seen := w.buggify[pc]
	if !seen {
		on = w.rng.IntN(4) == 0
		w.buggify[pc] = on
		w.record("-", "buggify", fmt.Sprintf("site %s:%d enabled=%v", shortFile(file), line, on))
	}
	return on && w.rng.IntN(4) == 0
}

// Rand returns a source of random numbers for code running on a host: the
// world's seeded source under a simulation, so that the run stays
// determined by its seed, and a source seeded from the system otherwise.
// Use it instead of math/rand's top-level functions in code meant to run
// under simulation. The source is not safe for concurrent use (a simulated
// runtime polls one task at a time).
func Rand(cx *future.Context) *rand.Rand {
	if w := worldOf(cx); w != nil {
		return w.rng
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// worldOf returns the World of the simulated runtime polling cx, or nil.
func worldOf(cx *future.Context) *World {
	if cx == nil {
		return nil
	}
	h, ok := blitz.Current(cx)
	if !ok {
		return nil
	}
	s, ok := h.Runtime().Simulation().(*hostSim)
	if !ok {
		return nil
	}
	return s.h.w
}

// shortFile is the last two elements of a path.
func shortFile(path string) string {
	slash := 0
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			slash++
			if slash == 2 {
				return path[i+1:]
			}
		}
	}
	return path
}
