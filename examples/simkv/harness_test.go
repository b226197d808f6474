package simkv_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/simkv"
	"github.com/blitz-go/blitz/sim"
)

// The simulated cluster: three replicas, the leader first, and a client
// host.
var (
	replicaHosts = []string{"a", "b", "c"}
	replicaIPs   = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}
	clientHost   = "client"
	clientIP     = "10.0.0.9"
)

// scenario is what one simulated run does.
type scenario struct {
	// Bug turns on Config.AckBeforeSync.
	Bug bool
	// Faults injects partitions, crashes, kills and disk faults.
	Faults bool
	// Duration is the virtual time the clients run for.
	Duration time.Duration
}

// verdict is the outcome of one run.
type verdict struct {
	history             *simkv.History
	result              porcupine.CheckResult
	bad                 []simkv.Op // the operations on a key that is not linearizable
	puts, gets, unknown int
	steps               int
	hash                uint64
	virtual             time.Duration
	faults              []string // the faults injected, for a report
}

// failed reports whether the history is not linearizable.
func (v verdict) failed() bool { return v.result != porcupine.Ok }

// String summarizes the verdict.
func (v verdict) String() string {
	return fmt.Sprintf("%s: %d PUT ok, %d GET ok, %d unknown; %d steps, %v virtual, trace hash %#x, %d faults",
		v.result, v.puts, v.gets, v.unknown, v.steps, v.virtual, v.hash, len(v.faults))
}

// report describes a failing verdict: the operations of the key that
// cannot be linearized, and the faults.
func (v verdict) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nthe operations on the key that is not linearizable, up to the first that cannot be", v)
	bad := v.bad
	if len(bad) > maxReported {
		fmt.Fprintf(&b, " (the last %d of %d)", maxReported, len(bad))
		bad = bad[len(bad)-maxReported:]
	}
	b.WriteString(":\n")
	for _, o := range bad {
		fmt.Fprintf(&b, "  %s\n", o)
	}
	fmt.Fprintf(&b, "faults:\n  %s", strings.Join(v.faults, "\n  "))
	return b.String()
}

// maxReported bounds the operations a report lists.
const maxReported = 30

// replicaConfig is the configuration of replica i of the simulated cluster.
func replicaConfig(i int, bug bool) simkv.Config {
	addrs := make([]simkv.Addr, len(replicaIPs))
	for j, ip := range replicaIPs {
		addrs[j] = simkv.Addr{Client: ip + ":7000", Peer: ip + ":7001"}
	}
	return simkv.Config{Self: i, Replicas: addrs, LogPath: "/data/simkv.log", AckBeforeSync: bug}
}

// simulate runs sc on w: it starts the replicas and the client workload,
// injects faults from the world's seeded source while the clients run,
// and checks the clients' history for linearizability. Call it inside the
// bubble of w.
func simulate(w *sim.World, sc scenario) (verdict, error) {
	net := w.Network()
	net.SetLatency(200*time.Microsecond, 2*time.Millisecond)
	net.SetConnectTimeout(500 * time.Millisecond)
	hosts := make([]*sim.Host, len(replicaHosts))
	for i, name := range replicaHosts {
		hosts[i] = w.MustHost(name, replicaIPs[i])
		if sc.Faults {
			hosts[i].Disk().SetFaults(sim.DiskFaults{ReadError: 0.02, WriteError: 0.002, BitFlip: 0.02, TornWrite: 0.5})
		}
		cfg := replicaConfig(i, sc.Bug)
		if err := hosts[i].Start(func(rt *blitz.Runtime) error {
			_, err := simkv.Start(rt.Handle(), cfg)
			return err
		}); err != nil {
			return verdict{}, err
		}
	}
	rt, err := blitz.New(w.MustHost(clientHost, clientIP).Config())
	if err != nil {
		return verdict{}, err
	}
	wl := &simkv.Workload{
		Addr: replicaIPs[0] + ":7000", Clients: 3, Keys: 4, Duration: sc.Duration,
		Timeout: 500 * time.Millisecond, Think: 20 * time.Millisecond, Rand: w.Rand(),
	}
	run := blitz.SpawnOn(rt.Handle(), wl.RunAsync())
	inj := &injector{w: w, rng: w.Rand(), hosts: hosts, down: make([]time.Duration, len(hosts))}
	for !run.IsFinished() {
		next := w.Now() + inj.pause()
		if err := w.RunUntil(func() bool { return run.IsFinished() || w.Now() >= next }); err != nil {
			return verdict{}, err
		}
		if sc.Faults && !run.IsFinished() {
			if err := inj.step(); err != nil {
				return verdict{}, err
			}
		}
	}
	hist, err := blitz.BlockOn(context.Background(), rt.Handle(), run)
	if err != nil {
		return verdict{}, err
	}
	res, bad := hist.Value.Linearizable(time.Minute)
	v := verdict{history: hist.Value, result: res, bad: bad, steps: w.Steps(), hash: w.TraceHash(), virtual: w.Now(), faults: inj.log}
	v.puts, v.gets, v.unknown = hist.Value.Stats()
	return v, nil
}

// injector injects faults into a running world, its choices drawn from the
// world's seeded source.
type injector struct {
	w     *sim.World
	rng   *rand.Rand
	hosts []*sim.Host
	// down is, per replica, the virtual time it restarts at (0: up).
	down []time.Duration
	log  []string
}

// pause draws the time until the next fault.
func (f *injector) pause() time.Duration {
	return 100*time.Millisecond + time.Duration(f.rng.Int64N(int64(300*time.Millisecond)))
}

// step restarts the replicas due, then injects one fault, or none: a
// partition isolating one host (a replica or the client), a heal, a crash
// (power loss) of the leader or of a follower, a kill (process death) of
// a replica.
func (f *injector) step() error {
	now := f.w.Now()
	for i, h := range f.hosts {
		if f.down[i] > 0 && now >= f.down[i] {
			f.down[i] = 0
			f.note("restart " + h.Name())
			if err := h.Restart(); err != nil {
				return err
			}
		}
	}
	all := append(append([]string(nil), replicaHosts...), clientHost)
	switch f.rng.IntN(10) {
	case 0, 1:
		x := all[f.rng.IntN(len(all))]
		rest := make([]string, 0, len(all)-1)
		for _, y := range all {
			if y != x {
				rest = append(rest, y)
			}
		}
		f.note("isolate " + x)
		f.w.Network().Partition([]string{x}, rest)
	case 2, 3:
		f.note("heal")
		f.w.Network().Heal()
	case 4:
		f.crash(0, false)
	case 5:
		f.crash(1+f.rng.IntN(len(f.hosts)-1), false)
	case 6:
		f.crash(f.rng.IntN(len(f.hosts)), true)
	}
	return nil
}

// crash crashes (or kills) replica i if it is up, to restart 50 to 500 ms
// later.
func (f *injector) crash(i int, kill bool) {
	if f.down[i] > 0 {
		return
	}
	h := f.hosts[i]
	if kill {
		f.note("kill " + h.Name())
		h.Kill()
	} else {
		f.note("crash " + h.Name())
		h.Crash()
	}
	f.down[i] = f.w.Now() + 50*time.Millisecond + time.Duration(f.rng.Int64N(int64(450*time.Millisecond)))
}

// note logs a fault with its virtual time.
func (f *injector) note(what string) {
	f.log = append(f.log, fmt.Sprintf("%10v %s", f.w.Now().Round(time.Microsecond), what))
}
