package blitz

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/blitz-go/blitz/backend"
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
	// is pending) or the simulation stopped. BlockOn calls it on a
	// simulated runtime instead of waiting on a channel.
	RunUntil(done func() bool) error
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

// blockOnSimulated is BlockOn's wait on a simulated runtime: the caller
// drives the simulation until sig is raised, ctx ends or the runtime shuts
// down.
func blockOnSimulated(ctx context.Context, rt *Runtime, sig *waker.Signal) error {
	var cause error
	err := rt.sim.RunUntil(func() bool {
		select {
		case <-sig.Chan():
			return true
		case <-ctx.Done():
			cause = context.Cause(ctx)
			return true
		case <-rt.sched.Done():
			cause = ErrShutdown
			return true
		default:
			return false
		}
	})
	if cause != nil {
		return cause
	}
	return err
}

// Simulation returns Config.Simulation, nil for a runtime of the real
// world: how code running under a simulator reaches it (for instance the
// sim module's Buggify, through Current).
func (rt *Runtime) Simulation() Simulation { return rt.sim }
