package scheduler_test

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// The tests of the tick budget (BudgetPerTick polls between two runs of the
// driver) and of the adaptive global-queue interval (see the package doc,
// "Work-finding order"). They assert counts, never wall-clock times: the
// busy-waits below are inputs, and a loaded machine only makes them longer,
// which every bound here allows for.

// busyWait spins for at least d on the monotonic clock: a poll that holds
// its worker, as a CPU-bound task does.
func busyWait(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// wantInterval is the interval the worker uses for an average poll of
// avgPollNs: 1 ms over it, clamped, as the package doc states it.
func wantInterval(avgPollNs float64) int {
	iv := 1e6 / math.Max(avgPollNs, 1)
	return int(math.Min(math.Max(iv, scheduler.MinGlobalInterval), scheduler.MaxGlobalInterval))
}

// gapDriver is a Driver that measures, per worker, how many polls that
// worker made between two of its Maintain runs. The tasks count their polls
// in polls[cx.Worker()], on the polling worker's goroutine, and Maintain
// runs on the same goroutine, so each gap is exact: no slack for races.
type gapDriver struct {
	polls  [2]atomic.Int64 // polls per worker: added by that worker's polls
	last   [2]atomic.Int64 // polls[i] at worker i's previous Maintain
	maxGap [2]atomic.Int64 // the largest gap seen on worker i
	runs   [2]atomic.Int64 // Maintain runs of worker i
}

// poll counts one poll on cx's worker.
func (d *gapDriver) poll(cx *future.Context) { d.polls[cx.Worker()].Add(1) }

func (d *gapDriver) Maintain(cx *future.Context) time.Duration {
	i := cx.Worker()
	p := d.polls[i].Load()
	if gap := p - d.last[i].Swap(p); gap > d.maxGap[i].Load() {
		d.maxGap[i].Store(gap)
	}
	d.runs[i].Add(1)
	return -1
}

// chainLink is a task that counts its poll, spawns its successor from
// inside (to the worker's LIFO) and completes: local work that never runs
// out, made of new tasks. The link that sees stop ends the chain.
type chainLink struct {
	s     *scheduler.Scheduler
	count func(cx *future.Context)
	stop  *atomic.Bool
	ended chan struct{}
}

func (c *chainLink) Poll(cx *future.Context) (int, bool) {
	c.count(cx)
	if c.stop.Load() {
		close(c.ended) // one link is live at a time: only one sees stop
		return 0, true
	}
	next := *c
	scheduler.Spawn(c.s, cx, future.Future[int](&next)).Detach()
	return 0, true
}

// TestAlwaysRunnableTasksDoNotStarveTheDriver: tasks that are runnable at
// every poll (woken during their own poll, a chain of spawns, two tasks
// waking each other through the LIFO) never leave a worker without work,
// yet the worker leaves its tick for its maintenance (the driver, the
// deferred tasks, the closing check) at least every BudgetPerTick polls.
// Each gap is counted on the worker's own goroutine, so the bound is exact;
// on one worker, whose tick never runs out of work, every full tick is
// exactly BudgetPerTick polls. Without the tick's budget (a tick that runs
// while it finds work) the driver would run once, at the start.
func TestAlwaysRunnableTasksDoNotStarveTheDriver(t *testing.T) {
	target := int64(64 * scheduler.BudgetPerTick)
	if testing.Short() {
		target = 24 * scheduler.BudgetPerTick
	}
	type workload func(e *env, d *gapDriver, stop *atomic.Bool) (wait func())
	selfWake := func(e *env, d *gapDriver, stop *atomic.Bool) func() {
		hs := make([]scheduler.JoinHandle[int], 4)
		for i := range hs {
			p := newProbe(e, fmt.Sprintf("self-waker %d", i), func(cx *future.Context) (int, bool) {
				d.poll(cx)
				if stop.Load() {
					return 0, true
				}
				cx.Waker().Wake() // woken during its own poll: back of the local queue
				return 0, false
			})
			hs[i] = scheduler.Spawn(e.s, nil, future.Future[int](p))
		}
		return func() {
			for i, h := range hs {
				_, err := wait(e, h, fmt.Sprintf("self-waker %d", i))
				require.NoError(e.t, err)
			}
		}
	}
	chain := func(e *env, d *gapDriver, stop *atomic.Bool) func() {
		c := &chainLink{s: e.s, count: d.poll, stop: stop, ended: make(chan struct{})}
		scheduler.Spawn(e.s, nil, future.Future[int](c)).Detach()
		return func() { recv(e.t, c.ended, "the end of the spawn chain") }
	}
	pingPong := func(e *env, d *gapDriver, stop *atomic.Bool) func() {
		var mu sync.Mutex
		var wks [2]waker.Waker
		hs := make([]scheduler.JoinHandle[int], 2)
		for i := range hs {
			p := newProbe(e, fmt.Sprintf("ping-pong %d", i), func(cx *future.Context) (int, bool) {
				d.poll(cx)
				mu.Lock()
				wks[i] = cx.Waker()
				other := wks[1-i]
				mu.Unlock()
				if other.IsZero() {
					cx.Waker().Wake() // the other has not run yet: stay runnable
					return 0, false
				}
				cx.Wake(other) // to this worker's LIFO
				return 0, stop.Load()
			})
			hs[i] = scheduler.Spawn(e.s, nil, future.Future[int](p))
		}
		return func() {
			for i, h := range hs {
				_, err := wait(e, h, fmt.Sprintf("ping-pong %d", i))
				require.NoError(e.t, err)
			}
		}
	}
	for _, c := range []struct {
		name    string
		workers int
		load    workload
	}{
		{"self-wake", 1, selfWake},
		{"spawn-chain", 1, chain},
		{"ping-pong", 1, pingPong},
		{"self-wake/workers=2", 2, selfWake},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := new(gapDriver)
			e := newEnv(t, scheduler.Config{Workers: c.workers, Driver: d})
			var stop atomic.Bool
			waitAll := c.load(e, d, &stop)
			eventually(t, func() bool { return d.polls[0].Load()+d.polls[1].Load() >= target }, "%d polls", target)
			stop.Store(true)
			waitAll()
			e.shutdown() // the workers have exited: the counters are final
			e.checkNow()
			for i := range c.workers {
				polls, runs, gap := d.polls[i].Load(), d.runs[i].Load(), d.maxGap[i].Load()
				t.Logf("worker %d: %d polls, %d driver runs, largest gap %d", i, polls, runs, gap)
				require.LessOrEqual(t, gap, int64(scheduler.BudgetPerTick),
					"worker %d polled more than BudgetPerTick times between two driver runs", i)
				// The polls after the last Maintain (the tick the shutdown
				// cut) are in no gap: one tick of slack.
				require.LessOrEqual(t, polls, int64(scheduler.BudgetPerTick)*(runs+1),
					"worker %d: %d polls for %d driver runs", i, polls, runs)
			}
			if c.workers == 1 {
				// Alone and never out of work, the worker spends its whole
				// budget in each tick: the bound above is reached, not
				// met by ticks that end early.
				require.Equal(t, int64(scheduler.BudgetPerTick), d.maxGap[0].Load())
				require.GreaterOrEqual(t, d.runs[0].Load(), target/scheduler.BudgetPerTick)
			}
		})
	}
}

// TestGlobalIntervalEdges: the pure adaptation (Adapt, GlobalInterval) at
// the clamps' boundaries, on degenerate ticks, and converging from either
// clamp in the number of ticks the EWMA of weight 0.1 gives.
func TestGlobalIntervalEdges(t *testing.T) {
	t.Run("boundaries", func(t *testing.T) {
		// 1e6 / 255 = 3921.57 ns is the largest average that gives the
		// upper clamp; 1e6 / 8 = 125,000 ns the smallest that gives the
		// lower one on the formula, and every average above 1e6 / 9 =
		// 111,111 ns truncates to 8 anyway.
		for _, c := range []struct {
			avg  float64
			want int
		}{
			{0, scheduler.MaxGlobalInterval}, // below 1 ns counts as 1 ns
			{0.5, scheduler.MaxGlobalInterval},
			{1, scheduler.MaxGlobalInterval},
			{3921, scheduler.MaxGlobalInterval},
			{3922, 254},
			{1e6 / 200, 200},
			{111111, 9},
			{111112, scheduler.MinGlobalInterval},
			{124999, scheduler.MinGlobalInterval},
			{125000, scheduler.MinGlobalInterval},
			{125001, scheduler.MinGlobalInterval},
			{1e18, scheduler.MinGlobalInterval},
			{math.MaxFloat64, scheduler.MinGlobalInterval},
			{math.Inf(1), scheduler.MinGlobalInterval},
		} {
			require.Equal(t, c.want, scheduler.GlobalInterval(c.avg), "average %v ns", c.avg)
		}
		// Every average in between agrees with the formula and stays in
		// the clamp.
		for avg := 1.0; avg < 1e7; avg *= 1.01 {
			iv := scheduler.GlobalInterval(avg)
			require.Equal(t, wantInterval(avg), iv, "average %v ns", avg)
			require.GreaterOrEqual(t, iv, scheduler.MinGlobalInterval)
			require.LessOrEqual(t, iv, scheduler.MaxGlobalInterval)
		}
	})

	t.Run("degenerate ticks", func(t *testing.T) {
		start := scheduler.InitialAvgPollNs()
		require.Equal(t, 50_000.0, start) // what DefaultGlobalInterval polls per ms give
		// A tick that took no measurable time: the average decays by the
		// weight, and the interval follows it.
		avg, iv := scheduler.Adapt(start, 128, 0)
		require.InDelta(t, 0.9*start, avg, 1e-9)
		require.Equal(t, wantInterval(0.9*start), iv)
		// Zero-duration ticks drive the average towards 0 and the interval
		// to the upper clamp, never past it.
		for range 1000 {
			avg, iv = scheduler.Adapt(avg, 1, 0)
		}
		require.GreaterOrEqual(t, avg, 0.0)
		require.Equal(t, scheduler.MaxGlobalInterval, iv)
		// The sample is the tick's mean poll: 128 polls in 128 ms weigh as
		// one poll of 1 ms, not as one of 128 ms.
		a1, i1 := scheduler.Adapt(start, 128, 128*time.Millisecond)
		a2, i2 := scheduler.Adapt(start, 1, time.Millisecond)
		require.Equal(t, a2, a1)
		require.Equal(t, i2, i1)
		require.InDelta(t, 0.1*1e6+0.9*start, a1, 1e-6)
		// The longest tick a Duration holds: finite, the lower clamp.
		avg, iv = scheduler.Adapt(start, 1, time.Duration(math.MaxInt64))
		require.False(t, math.IsInf(avg, 0) || math.IsNaN(avg), "average %v", avg)
		require.InDelta(t, 0.1*float64(math.MaxInt64), avg, 1e6)
		require.Equal(t, scheduler.MinGlobalInterval, iv)
		// ... from which cheap polls still bring it back, in the ticks
		// 0.9^k x 9.2e17 ns <= 3921 ns takes.
		ticks := 0
		for iv != scheduler.MaxGlobalInterval {
			avg, iv = scheduler.Adapt(avg, 128, 0)
			ticks++
			require.Less(t, ticks, 1000, "the interval never came back from a huge tick")
		}
		want := math.Ceil(math.Log(1e6/255/(0.1*float64(math.MaxInt64))) / math.Log(0.9))
		require.InDelta(t, want, ticks, 1)
	})

	// converge runs ticks of poll until the interval reaches want and
	// returns their number, checking that each step moves the interval
	// towards want only (the EWMA does not overshoot).
	converge := func(t *testing.T, avg float64, poll time.Duration, want int) int {
		t.Helper()
		iv := scheduler.GlobalInterval(avg)
		ticks := 0
		for iv != want {
			prev := iv
			avg, iv = scheduler.Adapt(avg, scheduler.BudgetPerTick, scheduler.BudgetPerTick*poll)
			ticks++
			if want > prev {
				require.GreaterOrEqual(t, iv, prev, "tick %d moved away from %d", ticks, want)
			} else {
				require.LessOrEqual(t, iv, prev, "tick %d moved away from %d", ticks, want)
			}
			require.Less(t, ticks, 1000, "never reached %d", want)
		}
		return ticks
	}
	// steady returns the average after many ticks of poll.
	steady := func(poll time.Duration) float64 {
		avg := scheduler.InitialAvgPollNs()
		for range 1000 {
			avg, _ = scheduler.Adapt(avg, scheduler.BudgetPerTick, scheduler.BudgetPerTick*poll)
		}
		return avg
	}
	t.Run("from the upper clamp", func(t *testing.T) {
		// Settled on 1 us polls (avg 1,000 ns, interval 255), then 1 ms
		// polls: 1e6 - 999,000 x 0.9^k >= 111,112 first at k = 2 (one
		// tick gives 100,900 ns, interval 9).
		avg := steady(time.Microsecond)
		require.InDelta(t, 1000, avg, 1e-3)
		require.Equal(t, 2, converge(t, avg, time.Millisecond, scheduler.MinGlobalInterval))
		// From the default, one tick of 1 ms polls is enough: 145,000 ns.
		require.Equal(t, 1, converge(t, scheduler.InitialAvgPollNs(), time.Millisecond, scheduler.MinGlobalInterval))
	})
	t.Run("from the lower clamp", func(t *testing.T) {
		// Settled on 1 ms polls, then 1 us polls: 1,000 + 999,000 x 0.9^k
		// <= 3,921.57 first at k = 56. A broken weight shows here: 0.5
		// would take 9 ticks, 0.01 about 560.
		avg := steady(time.Millisecond)
		require.InDelta(t, 1e6, avg, 1e-3)
		require.Equal(t, 56, converge(t, avg, time.Microsecond, scheduler.MaxGlobalInterval))
		// Polls of 20 us settle in between, at 1e6 / 20,000 = 50 (49 if
		// the average rounds a hair above 20,000 ns).
		require.InDelta(t, 50, scheduler.GlobalInterval(steady(20*time.Microsecond)), 1)
	})
}

// armDriver is a Driver that wakes, at its next Maintain and through the
// worker's Context, the task that armed it: a task whose every poll is a
// tick of its own (the tick finds nothing else and ends; the driver, run
// between ticks, requeues the task).
type armDriver struct {
	mu sync.Mutex
	wk waker.Waker
}

func (d *armDriver) arm(wk waker.Waker) {
	d.mu.Lock()
	d.wk = wk
	d.mu.Unlock()
}

func (d *armDriver) Maintain(cx *future.Context) time.Duration {
	d.mu.Lock()
	wk := d.wk
	d.wk = waker.Waker{}
	d.mu.Unlock()
	if !wk.IsZero() {
		cx.Wake(wk)
	}
	return -1
}

// TestGlobalIntervalFollowsPollTime: on a live worker, the interval follows
// the measured poll time: from the default to the lower clamp after one
// tick of 1 ms polls; up off the lower clamp for 20 us polls, without ever
// passing 1e6 / 20,000 = 50; to the upper clamp for empty polls (past 50
// under the race detector), no faster than the EWMA's weight allows; and
// back to the lower clamp after three ticks of 1 ms polls. One task alone
// on one worker runs the phases and reads the worker's state
// (GlobalStateOf) at each poll. A poll's busy-wait is a lower bound on its
// duration whatever the load, so the lower bounds on the average (and the
// upper bounds on the interval) are exact; only the phases that wait for
// the interval to rise depend on the load, and they allow for it (below).
func TestGlobalIntervalFollowsPollTime(t *testing.T) {
	if runtime.GOOS == "windows" {
		// Its phases time polls of 20 µs and 1 ms by busy-waiting on the
		// clock, whose readings are too coarse there (under Wine, and on
		// Windows before high-resolution waits) for the averages to follow.
		t.Skip("needs a clock fine enough to time 20 µs polls")
	}
	const (
		slow    = time.Millisecond
		mid     = 20 * time.Microsecond
		midWant = 10 // 1e6 / 100,000: off the lower clamp, with 5x of slack for a loaded machine
	)
	midLimit, cheapLimit := 20_000, 200_000 // polls; 5 to 50 times what a quiet machine needs
	// The average follows the wall clock, which a loaded machine
	// stretches by the worker's share of a CPU (3.5 times at a load of 7
	// on 2 CPUs, measured): the phases that wait for the interval to rise
	// ask for what survives 5 times that. Mid polls: off the lower clamp.
	// Empty polls reach the upper clamp when the scheduler's own cost per
	// poll is under 1e6 / 255 = 3.9 us: it is about 0.1 us, but 2.2 us
	// under the race detector, so under -race the phase asks only for 64
	// (an average under 15.6 us), more than any 20 us poll can give; the
	// clamp itself is TestGlobalIntervalEdges's.
	cheapWant := scheduler.MaxGlobalInterval
	if raceEnabled {
		cheapWant = 64
	}
	d := new(armDriver)
	// The task is a bare PollFn and the identity bookkeeping is off, to
	// keep that cost low; they change nothing in the tick or the
	// adaptation.
	e := newEnv(t, scheduler.Config{Workers: 1, Driver: d, NoTaskIdentity: true, NoTraceRegions: true})

	type phase int
	const (
		slowFromDefault phase = iota
		midPolls
		cheapPolls
		slowFromUpper
		done
	)
	// The task's own state, read after its completion. obs holds, per
	// phase, the worker's state at the task's first poll in each tick (the
	// state changes only between ticks, and the task, alone, is polled in
	// every tick); n counts the phase's polls.
	var (
		obs      [done][]scheduler.GlobalState
		polls    [done]int
		ph, n    = slowFromDefault, 0
		lastTick = int64(-1)
	)
	p := future.PollFn(func(cx *future.Context) (int, bool) {
		st, ok := scheduler.GlobalStateOf(e.s, cx)
		if !ok {
			e.failf("GlobalStateOf: not on a worker")
			return 0, true
		}
		if st.TickAt != lastTick {
			lastTick = st.TickAt
			obs[ph] = append(obs[ph], st)
		}
		polls[ph]++
		n++
		switch ph {
		case slowFromDefault:
			if n == 4 {
				ph, n = midPolls, 0
			}
		case midPolls:
			if st.Interval >= midWant || n == midLimit {
				ph, n = cheapPolls, 0
			}
		case cheapPolls:
			if st.Interval >= cheapWant || n == cheapLimit {
				ph, n = slowFromUpper, 0
			}
		case slowFromUpper:
			if n == 5 {
				return 0, true
			}
		}
		switch ph {
		case slowFromDefault, slowFromUpper:
			busyWait(slow)
			d.arm(cx.Waker()) // a tick of its own: back at the next Maintain
		case midPolls:
			busyWait(mid)
			cx.Waker().Wake()
		case cheapPolls:
			cx.Waker().Wake() // ~0 ns: a tick of BudgetPerTick polls
		}
		return 0, false
	})
	_, err := wait(e, scheduler.Spawn(e.s, nil, p), "adaptive")
	require.NoError(t, err)
	e.checkNow()

	for ph, sts := range obs {
		for i, st := range sts {
			require.Equal(t, wantInterval(st.AvgPollNs), st.Interval, "phase %d tick %d: interval and average disagree", ph, i)
			require.GreaterOrEqual(t, st.UntilGlobal, 0)
			require.Less(t, st.UntilGlobal, scheduler.MaxGlobalInterval)
		}
	}

	// From the default: every poll of this phase is a tick of >= 1 ms, so
	// after k ticks the average is >= 1 ms - 950 us x 0.9^k.
	sts := obs[slowFromDefault]
	require.Len(t, sts, 4, "slow polls that shared a tick")
	require.Equal(t, scheduler.DefaultGlobalInterval, sts[0].Interval, "a new worker's interval")
	require.Equal(t, scheduler.InitialAvgPollNs(), sts[0].AvgPollNs)
	for k := 1; k < len(sts); k++ {
		require.GreaterOrEqual(t, sts[k].AvgPollNs, 1e6-950e3*math.Pow(0.9, float64(k))-1, "after %d ticks of 1 ms polls", k)
		require.Equal(t, scheduler.MinGlobalInterval, sts[k].Interval, "after %d ticks of 1 ms polls", k)
	}

	// 20 us polls: every tick's mean poll is >= 20 us, and so is the
	// average, which started above it: the interval never passes 50, and
	// comes up from the lower clamp.
	sts = obs[midPolls]
	best := 0
	for i, st := range sts {
		require.GreaterOrEqual(t, st.AvgPollNs, float64(mid.Nanoseconds()), "mid tick %d", i)
		require.LessOrEqual(t, st.Interval, 50, "mid tick %d", i)
		best = max(best, st.Interval)
	}
	t.Logf("20 us polls: interval up to %d after %d ticks (%d polls)", best, len(sts), polls[midPolls])
	require.GreaterOrEqual(t, best, midWant, "20 us polls never brought the interval up to %d in %d polls", midWant, polls[midPolls])

	// Empty polls: the interval reaches the upper clamp (cheapWant), but
	// the average loses at most 10% per tick, so it takes at least
	// log(1e6 / cheapWant / start) / log(0.9) ticks.
	sts = obs[cheapPolls]
	last := sts[len(sts)-1]
	require.GreaterOrEqual(t, last.Interval, cheapWant, "empty polls never brought the interval to %d in %d polls (average %.0f ns)", cheapWant, polls[cheapPolls], last.AvgPollNs)
	for i := 1; i < len(sts); i++ { // one adaptation between two ticks
		require.GreaterOrEqual(t, sts[i].AvgPollNs, 0.9*sts[i-1].AvgPollNs*(1-1e-12), "cheap tick %d: the average fell faster than the EWMA allows", i)
	}
	ticks := len(sts) - 1
	minTicks := int(math.Ceil(math.Log(1e6/float64(cheapWant)/sts[0].AvgPollNs)/math.Log(0.9) - 1e-9))
	t.Logf("empty polls: from %.0f ns to %.0f ns (interval %d) in %d ticks (%d polls), at least %d", sts[0].AvgPollNs, last.AvgPollNs, last.Interval, ticks, polls[cheapPolls], minTicks)
	require.GreaterOrEqual(t, ticks, minTicks)

	// Back down: the first slow poll (the one that saw cheapWant) ends a
	// tick of empty polls, and each poll after it is a tick of >= 1
	// ms: sts[k] sees the average after k such ticks, >= 100,000 ns after
	// one (interval <= 10), >= 190,000 ns after two (the lower clamp).
	sts = obs[slowFromUpper]
	require.Len(t, sts, 5, "slow polls that shared a tick")
	require.LessOrEqual(t, sts[1].Interval, 10)
	require.Equal(t, scheduler.MinGlobalInterval, sts[2].Interval)
	require.Equal(t, scheduler.MinGlobalInterval, sts[3].Interval)
	require.Equal(t, scheduler.MinGlobalInterval, sts[4].Interval)
}

// TestInjectedTaskPolledWithinTheInterval: one worker whose local sources
// never run dry (tasks woken during their own polls, a chain of spawns
// through the LIFO) still polls a task spawned from outside, which goes to
// the global queue, within one interval of local polls: the worker counts
// the interval down at every poll and looks at the global queue when it
// reaches 0, so from any injection at most MaxGlobalInterval local polls
// come first with empty polls, and at most MinGlobalInterval once 500 us
// polls have brought the interval to the lower clamp. The local polls are
// counted on the worker's goroutine and read by the injected task there,
// so the bound is exact (the count read after Spawn returned can only be
// higher than at the injection, which makes the gap smaller). Without the
// periodic look the injected task would wait for ever; with a fixed
// interval of the default 20, 10 injections would all stay within 8
// polls with a probability of 2e-4.
func TestInjectedTaskPolledWithinTheInterval(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 10
	}
	e := newEnv(t, scheduler.Config{Workers: 1})
	var (
		local   atomic.Int64 // polls of the local tasks
		stop    atomic.Bool
		slow    atomic.Bool  // the local polls busy-wait 500 us
		settled atomic.Bool  // a local poll saw the lower clamp in force
		seen    atomic.Int64 // the largest interval a local poll saw
	)
	count := func(cx *future.Context) {
		local.Add(1)
		st, ok := scheduler.GlobalStateOf(e.s, cx)
		if !ok {
			e.failf("GlobalStateOf: not on a worker")
			return
		}
		if int64(st.Interval) > seen.Load() {
			seen.Store(int64(st.Interval))
		}
		if slow.Load() {
			if st.Interval == scheduler.MinGlobalInterval && st.UntilGlobal < scheduler.MinGlobalInterval {
				// The countdown restarted since the interval came
				// down: every look from now on comes within 8 polls
				// (the 500 us ticks keep the average above 125 us).
				settled.Store(true)
			}
			busyWait(500 * time.Microsecond)
		}
	}
	hs := make([]scheduler.JoinHandle[int], 6)
	for i := range hs {
		p := newProbe(e, fmt.Sprintf("local %d", i), func(cx *future.Context) (int, bool) {
			count(cx)
			if stop.Load() {
				return 0, true
			}
			cx.Waker().Wake()
			return 0, false
		})
		hs[i] = scheduler.Spawn(e.s, nil, future.Future[int](p))
	}
	c := &chainLink{s: e.s, count: count, stop: &stop, ended: make(chan struct{})}
	scheduler.Spawn(e.s, nil, future.Future[int](c)).Detach()

	inject := func(bound int64, what string) {
		t.Helper()
		for r := range rounds {
			var at atomic.Int64
			h := scheduler.Spawn(e.s, nil, future.Future[int](newProbe(e, "injected", func(*future.Context) (int, bool) {
				at.Store(local.Load())
				return 0, true
			})))
			from := local.Load()
			_, err := wait(e, h, "injected task")
			require.NoError(t, err)
			require.LessOrEqual(t, at.Load()-from, bound, "%s, round %d: local polls before the injected task's poll", what, r)
		}
	}

	eventually(t, func() bool { return local.Load() > 4*scheduler.BudgetPerTick }, "the local tasks run")
	inject(scheduler.MaxGlobalInterval, "empty polls")
	require.Greater(t, seen.Load(), int64(scheduler.DefaultGlobalInterval), "empty polls did not raise the interval")

	slow.Store(true)
	eventually(t, settled.Load, "500 us polls bring the interval to the lower clamp")
	inject(scheduler.MinGlobalInterval, "500 us polls")

	stop.Store(true)
	for i, h := range hs {
		_, err := wait(e, h, fmt.Sprintf("local %d", i))
		require.NoError(t, err)
	}
	recv(t, c.ended, "the end of the spawn chain")
}
