// Command idletimeouts keeps an idle timeout for each of a million simulated sessions, first with
// timerwheel entries embedded in the session structs, then with one time.AfterFunc timer per session,
// and prints what each costs: heap bytes per session, and nanoseconds to arm and to re-arm ("touch") a
// timeout. Then it advances the wheel's virtual clock and checks that exactly the sessions that were
// not touched recently expired.
//
//	go run ./examples/idletimeouts            # a million sessions
//	go run ./examples/idletimeouts -n 100000
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/blitz-go/blitz/timerwheel"
)

// Idle timeouts are spread over [idleMin, idleMin+idleSpread) so that they land on every level.
const (
	idleMin    = 30 * time.Second
	idleSpread = 30 * time.Second
)

// session is what a server keeps per connection; the timeout lives inside it and costs no allocation.
type session struct {
	id      int
	touched time.Duration // virtual time of the last activity
	idle    time.Duration // this session's idle timeout
	timeout timerwheel.Entry[*session]
}

// stdSession is the same session with a runtime timer from the time package.
type stdSession struct {
	id      int
	touched time.Duration
	idle    time.Duration
	timeout *time.Timer
}

func main() {
	n := flag.Int("n", 1_000_000, "number of sessions")
	flag.Parse()
	if err := run(os.Stdout, *n); err != nil {
		fmt.Fprintln(os.Stderr, "idletimeouts:", err)
		os.Exit(1)
	}
}

type costs struct {
	heapPerSession  float64
	armNs, touchNs  float64
	expired, active int
}

func run(w io.Writer, n int) error {
	fmt.Fprintf(w, "%d sessions, each with an idle timeout between %v and %v\n\n", n, idleMin, idleMin+idleSpread)
	wheel := measureWheel(n)
	std := measureTime(n)
	fmt.Fprintf(w, "%-28s %14s %10s %10s\n", "", "heap/session", "arm", "touch")
	fmt.Fprintf(w, "%-28s %12.0f B %8.0f ns %8.0f ns\n", "timerwheel (embedded Entry)", wheel.heapPerSession, wheel.armNs, wheel.touchNs)
	fmt.Fprintf(w, "%-28s %12.0f B %8.0f ns %8.0f ns\n", "time.AfterFunc per session", std.heapPerSession, std.armNs, std.touchNs)
	fmt.Fprintf(w, "\nafter %v of virtual time: %d sessions expired, %d still active (checked one by one)\n",
		idleMin+idleSpread, wheel.expired, wheel.active)
	if wheel.expired+wheel.active != n {
		return fmt.Errorf("%d expired + %d active != %d sessions", wheel.expired, wheel.active, n)
	}
	return nil
}

// measureWheel arms, touches and expires n sessions on one Wheel driven by a virtual clock.
func measureWheel(n int) costs {
	tb := timerwheel.NewTimebase(time.Time{}, timerwheel.DefaultTick)
	at := func(d time.Duration) uint64 { return tb.DeadlineTick(tb.Origin().Add(d)) }
	rng := rand.New(rand.NewPCG(1, 2))
	before := heapInUse()
	sessions := make([]session, n)
	var w timerwheel.Wheel[*session]
	start := time.Now()
	for i := range sessions {
		s := &sessions[i]
		s.id, s.idle = i, idleMin+rand.N(idleSpread)
		s.timeout.Value = s
		w.Insert(&s.timeout, at(s.idle))
	}
	c := costs{armNs: perOp(time.Since(start), n), heapPerSession: float64(heapInUse()-before) / float64(n)}

	// Half the sessions see activity at a random moment of the first 20 s: their timeout restarts.
	start = time.Now()
	touches := n / 2
	for range touches {
		s := &sessions[rng.IntN(n)]
		s.touched = time.Duration(rng.Int64N(int64(20 * time.Second)))
		w.Reset(&s.timeout, at(s.touched+s.idle))
	}
	c.touchNs = perOp(time.Since(start), touches)

	// Advance the virtual clock to 60 s; a session must expire exactly when its deadline has passed.
	end := idleMin + idleSpread
	w.Advance(at(end), func(e *timerwheel.Entry[*session]) { c.expired++ })
	for i := range sessions {
		s := &sessions[i]
		if s.timeout.Pending() {
			c.active++
			if at(s.touched+s.idle) <= at(end) {
				panic(fmt.Sprintf("session %d should have expired", s.id))
			}
		}
	}
	runtime.KeepAlive(sessions)
	return c
}

// measureTime arms, touches and stops n sessions with time.AfterFunc timers.
func measureTime(n int) costs {
	rng := rand.New(rand.NewPCG(1, 2))
	before := heapInUse()
	sessions := make([]stdSession, n)
	start := time.Now()
	for i := range sessions {
		s := &sessions[i]
		s.id, s.idle = i, idleMin+rand.N(idleSpread)
		s.timeout = time.AfterFunc(s.idle, func() { panic("no timeout fires in this run") })
	}
	c := costs{armNs: perOp(time.Since(start), n), heapPerSession: float64(heapInUse()-before) / float64(n)}
	start = time.Now()
	touches := n / 2
	for range touches {
		s := &sessions[rng.IntN(n)]
		s.touched = time.Duration(rng.Int64N(int64(20 * time.Second)))
		s.timeout.Reset(s.idle)
	}
	c.touchNs = perOp(time.Since(start), touches)
	for i := range sessions {
		sessions[i].timeout.Stop()
	}
	return c
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func perOp(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / float64(max(n, 1)) }
