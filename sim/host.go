package sim

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/sim/internal/netsim"
)

// Host is a machine of the simulated world: an address, a disk, and the
// runtime the program runs on, made with blitz.New(h.Config()). A host can
// crash (its runtime stops at once, unsynced writes are lost) and restart
// (a new runtime, the durable files kept). Owned by the World's goroutine.
type Host struct {
	w     *World
	name  string
	addr  netip.Addr
	index int
	node  *netsim.Host
	// rt is the runtime of the current incarnation, nil before the first
	// New and after a crash; life counts the runtimes attached.
	rt   *blitz.Runtime
	life int
	// next is the task the world picked for the host's next Step (the
	// chooser hands it to the scheduler).
	next uint64
	// boot, set by Start, runs the program on each new runtime.
	boot func(rt *blitz.Runtime) error
	// stopped is set by Crash and Kill: the network stack's incarnation
	// is dead, and the next runtime needs a new one.
	stopped bool
	// base is the Config that Config starts from (SetConfig).
	base blitz.Config
	// dirty makes the next step run the host's Driver; dueAt is when its
	// timers next have something due (virtual time, as World.Now), as its
	// last Driver run said, if hasDue (else nothing is). See World.step.
	dirty, hasDue bool
	dueAt         time.Duration
}

// timerDue reports whether the host's timers have something due at now
// (virtual time).
func (h *Host) timerDue(now time.Duration) bool { return h.hasDue && now >= h.dueAt }

// Name returns the host's name, which Resolve answers with its address.
func (h *Host) Name() string { return h.name }

// Addr returns the host's address.
func (h *Host) Addr() netip.Addr { return h.addr }

// Config returns the blitz.Config of a runtime on this host: pass it to
// blitz.New, unchanged or with other fields set (Workers, IORings and
// Backend are ignored). A host has one runtime at a time.
func (h *Host) Config() blitz.Config {
	cfg := h.base
	cfg.Simulation = &hostSim{h: h}
	return cfg
}

// SetConfig sets the Config that Config, and so Start and Restart, make
// the host's runtimes from (its Simulation is replaced by the host's):
// TimerTick, ReadBufferCount and ReadBufferSize, the identity switches,
// OnPanic.
func (h *Host) SetConfig(cfg blitz.Config) { h.base = cfg }

// Runtime returns the host's current runtime, nil when it has none (never
// made, or crashed and not restarted).
func (h *Host) Runtime() *blitz.Runtime { return h.rt }

// Start makes the host's runtime and runs boot on it (to spawn the
// program's tasks: a server's accept loop, a replica's main task); Restart
// runs boot again on each new runtime.
func (h *Host) Start(boot func(rt *blitz.Runtime) error) error {
	rt, err := blitz.New(h.Config())
	if err != nil {
		return err
	}
	h.boot = boot
	return boot(rt)
}

// live returns the runtime the world steps, nil when the host has none.
func (h *Host) live() *blitz.Runtime { return h.rt }

// Crash is a power loss: the host's runtime stops at once (no task runs
// again, no deferred call runs, no cancel), its connections vanish without
// a word to the peers, and its disk keeps only what was synced. A wait on
// its runtime (BlockOn) fails with ErrHostDown.
func (h *Host) Crash() {
	if h.rt == nil {
		return
	}
	h.w.recordNum(h.name, "crash", "life", uint64(h.life))
	h.rt, h.stopped = nil, true
	h.node.Crash()
}

// Kill is the death of the program while the machine stays up: as Crash,
// but the kernel resets the host's connections (peers see
// ECONNRESET) and the disk keeps everything written.
func (h *Host) Kill() {
	if h.rt == nil {
		return
	}
	h.w.recordNum(h.name, "kill", "life", uint64(h.life))
	h.rt, h.stopped = nil, true
	h.node.Kill()
}

// Restart brings the host back after a Crash or Kill (killing it first if
// it runs): a new incarnation of its network stack, its durable files, and
// a new runtime on which the function given to Start runs again.
func (h *Host) Restart() error {
	if h.rt != nil {
		h.Kill()
	}
	h.node.Restart()
	h.stopped = false
	h.w.record(h.name, "restart", "")
	if h.boot == nil {
		return nil
	}
	rt, err := blitz.New(h.Config())
	if err != nil {
		return err
	}
	return h.boot(rt)
}

// Disk returns the host's simulated disk, to inject faults.
func (h *Host) Disk() *Disk { return h.node.Disk() }

// hostSim is the blitz.Simulation of one runtime of a host.
type hostSim struct {
	h *Host
	// rt is the runtime this Simulation was attached to.
	rt *blitz.Runtime
}

// Backend is the host's simulated network stack and disk; a runtime made
// after a Crash or Kill without Restart gets a new incarnation of them.
func (s *hostSim) Backend() backend.Backend {
	if h := s.h; h.stopped && h.rt == nil {
		h.node.Restart()
		h.stopped = false
	}
	return s.h.node.Backend()
}

// Chooser hands the scheduler the task the world picked.
func (s *hostSim) Chooser() scheduler.Chooser { return hostChooser{s.h} }

// Attach makes rt the host's runtime.
func (s *hostSim) Attach(rt *blitz.Runtime) error {
	h := s.h
	if s.rt != nil {
		return fmt.Errorf("%w: a host Config made two runtimes; call Config again", ErrConfig)
	}
	if h.rt != nil {
		return fmt.Errorf("%w: host %s has a runtime already (one at a time; Restart makes the next)", ErrConfig, h.name)
	}
	s.rt, h.rt = rt, rt
	h.life++
	h.dirty, h.hasDue = true, false
	h.w.recordNum(h.name, "runtime", "life", uint64(h.life))
	return nil
}

// Resolve answers with the address of the host named host ("localhost":
// the loopback address), or Go's "no such host" error.
func (s *hostSim) Resolve(host string) ([]netip.Addr, error) {
	if host == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	i := slices.IndexFunc(s.h.w.hosts, func(o *Host) bool { return o.name == host })
	if i < 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{s.h.w.hosts[i].addr}, nil
}

// RunUntil drives the world for a BlockOn on this runtime.
func (s *hostSim) RunUntil(done func() bool) error {
	var down bool
	err := s.h.w.RunUntil(func() bool {
		down = s.h.rt != s.rt
		return down || done()
	})
	if err == nil && down {
		return fmt.Errorf("%w: %s", ErrHostDown, s.h.name)
	}
	return err
}

// Stepping reports whether the world is polling a task.
func (s *hostSim) Stepping() bool { return s.h.w.stepping }

// hostChooser picks, in the host's scheduler, the task the world chose.
type hostChooser struct{ h *Host }

func (c hostChooser) Choose(ready []uint64) int {
	i := slices.Index(ready, c.h.next)
	if i < 0 {
		panic(fmt.Sprintf("sim: host %s: task %d chosen but not ready (ready: %v)", c.h.name, c.h.next, ready))
	}
	return i
}

// Disk is a host's simulated disk (Host.Disk): its files follow fsync (a
// Crash keeps what was synced), and faults can be injected (SetFaults).
// ReadFile, WriteFile and Files read and prepare its content from the
// test.
type Disk = netsim.Disk

// DiskFaults are the fault probabilities and latency of a Disk.
type DiskFaults = netsim.DiskFaults
