package blitz

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// Simulation is the seam a deterministic simulator (the sim module) plugs
// into a runtime through Config.Simulation. A program does not implement
// it: it receives a Config with it set from the simulator (sim.Host's
// Config), and New then makes a runtime that the simulator drives on its
// own goroutine, one task poll at a time (a driven scheduler: see the
// scheduler package, "Driven schedulers"), with the simulator's I/O and
// its choice of the next task.
//
// A simulated runtime has one worker and starts no goroutine. What would
// need one is refused with an error wrapping ErrSimulated: the blocking
// pool (Blocking, SpawnBlocking, and the file calls that fall back to it),
// processes, signals, and TLS handshakes. Name lookups (Resolve, and the
// dials that resolve) are answered by the simulator.
type Simulation interface {
	// Backend returns the simulated I/O backend of the runtime, or nil
	// for a runtime without I/O. Called once, by New.
	Backend() backend.Backend
	// Chooser returns what picks the next task to poll. Called once, by
	// New.
	Chooser() scheduler.Chooser
	// Attach is called by New with the runtime it made, before New
	// returns; an error fails New (and is returned wrapped).
	Attach(rt *Runtime) error
	// Resolve answers a name lookup made on the runtime.
	Resolve(host string) ([]netip.Addr, error)
	// RunUntil runs the simulation (every host's runtime, the network,
	// the clock) until done reports true, and returns nil; or returns an
	// error when done can never become true (every task waits and nothing
	// is pending) or the simulation stopped. BlockOn on a simulated
	// runtime spawns its future as a task and calls RunUntil until the
	// task finishes.
	RunUntil(done func() bool) error
	// Stepping reports whether the simulation is polling a task now (a
	// BlockOn from a task is refused, as on a real runtime).
	Stepping() bool
	// Buggify answers Buggify for the call site site ("file:line").
	Buggify(site string) bool
	// Rand returns the simulation's seeded source, for Rand.
	Rand() *rand.Rand
}

// ErrSimulated is returned by what a simulated runtime cannot run
// deterministically (see Simulation).
var ErrSimulated = errors.New("blitz: not available in a simulation")

// Simulated reports whether the runtime is driven by a simulator
// (Config.Simulation).
func (rt *Runtime) Simulated() bool { return rt.sim != nil }

// Scheduler returns the runtime's scheduler, for a simulator's Step.
func (rt *Runtime) Scheduler() *scheduler.Scheduler { return rt.sched }

// refuseSimulated returns an error wrapping ErrSimulated, naming what,
// when rt is simulated, and nil otherwise.
func (rt *Runtime) refuseSimulated(what string) error {
	if rt == nil || rt.sim == nil {
		return nil
	}
	return fmt.Errorf("%w: %s (it would run on a goroutine of its own)", ErrSimulated, what)
}

// blockOnSimulated is BlockOn on a simulated runtime: f runs as a task
// (so that everything it waits for is the simulation's: its timers, its
// I/O), and the caller drives the simulation until the task finishes, ctx
// ends, or the simulation cannot go on. A panic of f comes back as an
// error wrapping ErrPanicked.
func blockOnSimulated[T any](ctx context.Context, rt *Runtime, f future.Future[T]) (T, error) {
	var zero T
	if scheduler.OnWorker() || rt.sched.Driven() && rt.sim.Stepping() {
		future.Cancel(f)
		return zero, fmt.Errorf("blitz: BlockOn: %w", ErrBlockingInTask)
	}
	h, err := TrySpawnOn(rt.Handle(), f)
	if err != nil {
		return zero, fmt.Errorf("blitz: BlockOn: %w", err)
	}
	err = rt.sim.RunUntil(func() bool { return h.IsFinished() || ctx.Err() != nil })
	if !h.IsFinished() {
		h.Cancel()
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return zero, fmt.Errorf("blitz: BlockOn: %w", err)
	}
	r, _ := h.Poll(future.NewContext(waker.Waker{}))
	if r.Err != nil {
		return zero, fmt.Errorf("blitz: BlockOn: %w", r.Err)
	}
	return r.Value, nil
}

// Simulation returns Config.Simulation, nil for a runtime of the real
// world: how code running under a simulator reaches it (for instance the
// sim module's Buggify, through Current).
func (rt *Runtime) Simulation() Simulation { return rt.sim }

// inBubble reports whether the caller runs in a testing/synctest bubble (a
// simulation): its clock reads earlier than the process's start, since a
// bubble's starts in 2000.
func inBubble() bool { return time.Since(clockBase) < 0 }

// Buggify reports whether the calling code should take a rare path it
// wants tested: a slow branch, an early timeout, a retry, a smaller
// buffer. On a runtime of the real world it is always false (and costs a
// type check), so the call stays in production code; under a simulation
// the simulator decides from its seed (the sim module enables each call
// site, by file and line, in some runs, and then fires it at some of its
// calls). cx is the Context of the task's poll (future.Cx() in an async
// function); a nil cx, or one of no runtime, is false.
func Buggify(cx *future.Context) bool {
	sim := simulationOf(cx)
	if sim == nil {
		return false
	}
	_, file, line, _ := goruntime.Caller(1)
	return sim.Buggify(shortFile(file) + ":" + strconv.Itoa(line))
}

// Rand returns a source of random numbers for code running on the runtime
// polling cx: under a simulation, the simulation's seeded source, so that a
// run stays determined by its seed; otherwise a source seeded from the
// system. Use it, rather than math/rand's top-level functions, in code
// meant to run under simulation. The source is not safe for concurrent use
// (a simulated runtime polls one task at a time; elsewhere each call
// returns a new source).
func Rand(cx *future.Context) *rand.Rand {
	if sim := simulationOf(cx); sim != nil {
		return sim.Rand()
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// simulationOf returns the Simulation of the runtime polling cx, or nil.
func simulationOf(cx *future.Context) Simulation {
	if cx == nil {
		return nil
	}
	h, ok := Current(cx)
	if !ok {
		return nil
	}
	return h.rt.sim
}

// shortFile is the last two elements of a path: a call site's name that
// does not depend on where the module was built.
func shortFile(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		if j := strings.LastIndexByte(path[:i], '/'); j >= 0 {
			return path[j+1:]
		}
	}
	return path
}
