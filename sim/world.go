package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/sim/internal/netsim"
)

// Errors of a simulation. Each is returned wrapped, with the host, the step
// and the virtual time it happened at.
var (
	// ErrDeadlock: every task of every host waits and nothing the world
	// holds (a timer, a message in flight, a disk operation) can wake one,
	// while something still waits for a result.
	ErrDeadlock = errors.New("sim: every task waits and nothing is pending")
	// ErrStepLimit: the run took more steps than Options.MaxSteps.
	ErrStepLimit = errors.New("sim: step limit reached")
	// ErrTimeLimit: the run's virtual clock passed Options.MaxTime.
	ErrTimeLimit = errors.New("sim: virtual time limit reached")
	// ErrHostDown: a wait on a runtime of a host that crashed.
	ErrHostDown = errors.New("sim: the host is down")
	// ErrConfig: a bad Options value, host name or address.
	ErrConfig = errors.New("sim: invalid configuration")
)

// Options configure a simulation run.
type Options struct {
	// Seed fixes every choice of the run: which task runs next, the
	// network's latencies, losses and reorderings, and the disk's faults.
	Seed uint64
	// Strategy picks the next task; nil means Random().
	Strategy Strategy
	// MaxSteps bounds the polls of a run (0 means 10,000,000); a run that
	// takes more fails with ErrStepLimit (a livelock, or a run too long
	// for a test).
	MaxSteps int
	// MaxTime bounds the virtual time of a run (0 means 24 hours).
	MaxTime time.Duration
	// Trace keeps every event of the run (steps, clock jumps, network and
	// disk events) for World.Trace; without it only the last 64 are kept.
	Trace bool
	// Twice makes Check run every seed twice and fail a seed whose two
	// runs' traces differ (as -sim.twice does): a check that the program
	// under test is deterministic.
	Twice bool
}

// World is one run of a simulation: hosts, each with its runtime, the
// network and disks between them, a virtual clock and the run's seed. Make
// one with New (or let Check make one per seed). A World is driven by one
// goroutine, the one that runs the test; it is not safe for concurrent
// use.
type World struct {
	opts  Options
	rng   *rand.Rand
	pick  picker
	net   *netsim.World
	hosts []*Host
	// start is when the run began, as time.Now's UnixNano: virtual time
	// is counted from it (Now).
	start int64
	// steps counts the polls made; trace digests every event in order and
	// keeps them (all with Options.Trace, else the last traceTail).
	steps int
	trace traceLog
	// scratch buffers of step, reused.
	ready []taskKey
	ids   []uint64
	// running is set while the world drives (RunUntil), to refuse a
	// nested drive from a task.
	running bool
	// stepping is set while a task is polled (a BlockOn from it is
	// refused).
	stepping bool
	// buggify records, per call site of Buggify, whether it is enabled
	// in this run.
	buggify map[string]bool
}

// traceTail is how many of the latest events a World keeps without
// Options.Trace, for a failure's report.
const traceTail = 64

// New makes a World with opts. Call it inside a testing/synctest bubble
// (Check does): the world's virtual clock is the bubble's, so that
// time.Now and time.Sleep in the program, the runtime and its timers all
// read and move the same clock.
func New(opts Options) *World {
	if opts.Strategy == nil {
		opts.Strategy = Random()
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 10_000_000
	}
	if opts.MaxTime <= 0 {
		opts.MaxTime = 24 * time.Hour
	}
	w := &World{opts: opts, start: time.Now().UnixNano(), trace: newTraceLog(opts.Trace), buggify: map[string]bool{}}
	w.rng = rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	w.pick = opts.Strategy.newPicker(rand.New(rand.NewPCG(opts.Seed, 0x9c7)))
	w.net = netsim.NewWorld(rand.New(rand.NewPCG(opts.Seed, 0x2e7)))
	w.net.SetTrace(func(ev netsim.Event) { w.trace.add(w.Now(), ev.Host, ev.Kind, "", ev.Detail, 0, false) })
	return w
}

// Seed returns the run's seed.
func (w *World) Seed() uint64 { return w.opts.Seed }

// Steps returns the number of polls made so far.
func (w *World) Steps() int { return w.steps }

// Now returns the virtual time elapsed since the run began.
func (w *World) Now() time.Duration {
	// In the bubble the wall clock and the monotonic one move together:
	// this is time.Since, without its cost, paid at every event.
	return time.Duration(time.Now().UnixNano() - w.start)
}

// TraceHash returns a digest of every event so far (each poll's host and
// task, each jump of the clock, each network and disk event): two runs
// with the same seed and the same program have the same hash, event for
// event. Close adds the shutdown's events: the hash Check reports is the
// one after Close.
func (w *World) TraceHash() uint64 { return w.trace.hash }

// Trace returns the events kept (see Options.Trace), one per line: virtual
// time since the start, host, event.
func (w *World) Trace() []string { return w.trace.lines() }

// Rand returns the world's seeded source, for a test's own choices (the
// workload, the faults to inject). Code running on a host gets the same
// source from blitz.Rand.
func (w *World) Rand() *rand.Rand { return w.rng }

// record adds an event to the trace.
func (w *World) record(host, kind, detail string) {
	w.trace.add(w.Now(), host, kind, detail, nil, 0, false)
}

// recordNum adds an event whose detail ends with a number.
func (w *World) recordNum(host, kind, detail string, n uint64) {
	w.trace.add(w.Now(), host, kind, detail, nil, n, true)
}

// Host adds a host named name with address addr (an IPv4 or IPv6 address
// in text form). Its runtimes are made with blitz.New(h.Config()). Names
// and addresses must be distinct.
func (w *World) Host(name, addr string) (*Host, error) {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: host %q: %w", ErrConfig, name, err)
	}
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return nil, fmt.Errorf("%w: host name %q", ErrConfig, name)
	}
	for _, h := range w.hosts {
		if h.name == name || h.addr == a {
			return nil, fmt.Errorf("%w: host %q (%v) is taken", ErrConfig, name, a)
		}
	}
	h := &Host{w: w, name: name, addr: a, index: len(w.hosts)}
	h.node = w.net.AddHost(name, a)
	w.hosts = append(w.hosts, h)
	return h, nil
}

// MustHost is Host for a test's set-up: it panics on an error.
func (w *World) MustHost(name, addr string) *Host {
	h, err := w.Host(name, addr)
	if err != nil {
		panic(err)
	}
	return h
}

// Network returns the simulated network, to inject faults.
func (w *World) Network() *Network { return &Network{w: w} }

// RunUntil drives the world until done reports true: at each step it runs
// the timers and I/O due on every live host, picks one ready task of one
// host by the strategy and polls it; when no task is ready anywhere it
// moves the clock to the next thing due (a timer, a delivery). It returns
// an error wrapping ErrDeadlock when nothing is due and done is still
// false, ErrStepLimit or ErrTimeLimit past the limits. blitz.BlockOn on a
// simulated runtime calls it, so a test usually drives the world by
// blocking on its client's future.
func (w *World) RunUntil(done func() bool) error {
	if w.running {
		return fmt.Errorf("sim: RunUntil from inside the simulation (a task blocking on another): %w", blitz.ErrBlockingInTask)
	}
	w.running = true
	defer func() { w.running = false }()
	for _, h := range w.hosts {
		h.dirty = true // the test may have spawned, slept or injected faults since
	}
	for !done() {
		if w.steps >= w.opts.MaxSteps {
			return w.failf(ErrStepLimit, "after %d steps", w.steps)
		}
		if w.Now() > w.opts.MaxTime {
			return w.failf(ErrTimeLimit, "at %v", w.Now())
		}
		polled, wait, err := w.step()
		if err != nil {
			return err
		}
		if polled {
			continue
		}
		if !w.advance(wait) {
			return w.failf(ErrDeadlock, "%s", w.waiting())
		}
	}
	return nil
}

// failf wraps sentinel with the run's position.
func (w *World) failf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s (seed %d, step %d, virtual time %v)", sentinel, fmt.Sprintf(format, args...), w.opts.Seed, w.steps, w.Now())
}

// step gathers the ready tasks of every live host, picks one and polls it.
// Without one ready, wait is the soonest a host's timers have something
// due (negative: none).
//
// A host's Driver (its timers and I/O) runs only when something may have
// changed for it: its task ran in the last step, a timer of its is due,
// or its network stack has a completion or an event due (netsim's Due);
// otherwise its ready tasks are gathered without it. Which hosts run
// their Driver follows from the run's events, so it is deterministic too.
func (w *World) step() (polled bool, wait time.Duration, err error) {
	w.ready = w.ready[:0]
	now := w.Now()
	wait = -1
	for _, h := range w.hosts {
		rt := h.live()
		if rt == nil {
			continue
		}
		sched := rt.Scheduler()
		if h.dirty || h.timerDue(now) || h.node.Due() {
			var d time.Duration
			w.ids, d = sched.Maintain(w.ids[:0])
			h.dirty, h.hasDue, h.dueAt = false, d >= 0, now+d
		} else {
			w.ids = sched.ReadyIDs(w.ids[:0])
		}
		for _, id := range w.ids {
			w.ready = append(w.ready, taskKey{host: h.index, life: h.life, id: id})
		}
		if h.hasDue {
			if d := max(h.dueAt-now, 0); wait < 0 || d < wait {
				wait = d
			}
		}
	}
	if len(w.ready) == 0 {
		return false, wait, nil
	}
	k := w.ready[w.pick.pick(w.steps, w.ready)]
	h := w.hosts[k.host]
	h.next = k.id
	h.dirty = true // its poll may have armed a timer or submitted I/O
	w.steps++
	w.recordNum(h.name, "poll", "task", k.id)
	w.stepping = true
	_, err = h.rt.Scheduler().StepReady() // Maintain ran above
	w.stepping = false
	if err != nil {
		return false, 0, fmt.Errorf("sim: host %s: %w", h.name, err)
	}
	return true, wait, nil
}

// advance moves the clock to the next thing due: the sooner of the hosts'
// timers (wait from now) and the network's next event. It reports false
// when nothing is due at all.
func (w *World) advance(wait time.Duration) bool {
	now := time.Now()
	next, ok := w.net.NextEvent()
	if wait >= 0 && (!ok || now.Add(wait).Before(next)) {
		next, ok = now.Add(wait), true
	}
	if !ok {
		return false
	}
	d := next.Sub(now)
	if d <= 0 {
		d = time.Microsecond // due now but not fired: the timer wheel's tick rounds up
	}
	time.Sleep(d) // in the bubble: the clock jumps, nothing else runs
	w.recordNum("-", "clock", "", uint64(d))
	return true
}

// waiting describes the live tasks of every host, for a deadlock report.
func (w *World) waiting() string {
	var b strings.Builder
	for _, h := range w.hosts {
		rt := h.live()
		if rt == nil {
			continue
		}
		fmt.Fprintf(&b, "\nhost %s:\n", h.name)
		rt.Dump(&b)
	}
	return b.String()
}
