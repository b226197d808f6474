package timerwheel_test

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/timerwheel"
)

// schedSlack is how much later than its one-tick bound a timer may fire on
// a loaded machine (the Go runtime's timer latency and goroutine scheduling,
// made worse by -race and a shared CPU). The never-early checks have no
// slack.
const schedSlack = 150 * time.Millisecond

// modes are the two places f can run.
var modes = []struct {
	name string
	opts []timerwheel.Option
}{
	{"goroutine", nil},
	{"inline", []timerwheel.Option{timerwheel.WithInlineCallbacks()}},
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestAfterFuncNeverEarlyAtMostOneTickLate starts timers with random
// durations and checks that each f runs exactly once, never before its
// duration has passed, and no later than one tick after it (plus
// schedSlack), for two tick lengths and both callback modes.
func TestAfterFuncNeverEarlyAtMostOneTickLate(t *testing.T) {
	for _, tick := range []time.Duration{time.Millisecond, 16 * time.Millisecond} {
		for _, mode := range modes {
			t.Run(tick.String()+"/"+mode.name, func(t *testing.T) {
				svc := timerwheel.NewService(append(mode.opts, timerwheel.WithTick(tick))...)
				defer svc.Close()
				const n = 200
				var (
					wg       sync.WaitGroup
					lateness [n]time.Duration
					count    [n]atomic.Int32
				)
				wg.Add(n)
				for i := range n {
					d := time.Duration(rand.IntN(40_000)) * time.Microsecond
					if i%10 == 0 {
						d = -d // negative: fires at the next tick
					}
					start := time.Now()
					svc.AfterFunc(d, func() {
						lateness[i] = time.Since(start) - max(d, 0)
						count[i].Add(1)
						wg.Done()
					})
				}
				wg.Wait()
				worst := time.Duration(0)
				for i := range n {
					if lateness[i] < 0 {
						t.Errorf("timer %d fired early: lateness %v", i, lateness[i])
					}
					if lateness[i] > tick+schedSlack {
						t.Errorf("timer %d late: lateness %v, want <= %v", i, lateness[i], tick+schedSlack)
					}
					worst = max(worst, lateness[i])
				}
				sorted := slices.Sorted(slices.Values(lateness[:]))
				t.Logf("lateness p50 %v p99 %v max %v (tick %v)", sorted[n/2], sorted[n*99/100], worst, tick)
				time.Sleep(2 * tick)
				for i := range n {
					equal(t, count[i].Load(), int32(1), "timer %d fire count", i)
				}
			})
		}
	}
}

func TestTimerStop(t *testing.T) {
	svc := timerwheel.NewService()
	defer svc.Close()
	var fired atomic.Int32
	tm := svc.AfterFunc(100*time.Millisecond, func() { fired.Add(1) })
	equal(t, svc.Pending(), 1)
	if !tm.Stop() {
		t.Error("Stop of an active timer")
	}
	if tm.Stop() {
		t.Error("second Stop")
	}
	equal(t, svc.Pending(), 0)
	time.Sleep(150 * time.Millisecond)
	if got := fired.Load(); got != 0 {
		t.Errorf("stopped timer fired: fired.Load() = %v, want 0", got)
	}

	done := make(chan struct{})
	tm = svc.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	if tm.Stop() {
		t.Error("Stop after fire")
	}
}

func TestTimerReset(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			svc := timerwheel.NewService(mode.opts...)
			defer svc.Close()
			fires := make(chan time.Time, 10)
			f := func() { fires <- time.Now() }

			tm := svc.AfterFunc(time.Hour, f)
			start := time.Now()
			if !tm.Reset(20 * time.Millisecond) {
				t.Error("Reset of an active timer")
			}
			got := <-fires
			if d := got.Sub(start); d < 20*time.Millisecond {
				t.Errorf("fired early: after %v, want >= 20ms", d)
			}

			if tm.Reset(time.Millisecond) {
				t.Error("Reset after fire")
			}
			<-fires // fires again

			tm.Reset(time.Hour)
			if !tm.Stop() {
				t.Error("Stop of a timer re-armed by Reset")
			}
			if tm.Reset(time.Millisecond) {
				t.Error("Reset after Stop")
			}
			<-fires

			tm.Reset(time.Hour) // moving later: the earlier arm must not fire
			if !tm.Reset(time.Hour) {
				t.Error("Reset of an active timer")
			}
			time.Sleep(20 * time.Millisecond)
			if len(fires) != 0 {
				t.Errorf("%d fires after Reset to an hour, want none", len(fires))
			}
			equal(t, svc.Pending(), 1)
		})
	}
}

// TestCloseDiscardsPendingTimers checks what Close does to pending timers:
// they never fire, Stop and Reset of them return false, Reset does not
// re-arm them, AfterFunc after Close returns a Timer that never fires, and a
// second Close returns ErrClosed.
func TestCloseDiscardsPendingTimers(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			svc := timerwheel.NewService(append(mode.opts, timerwheel.WithShards(3))...)
			var fired atomic.Int32
			f := func() { fired.Add(1) }
			timers := make([]*timerwheel.Timer, 100)
			for i := range timers {
				timers[i] = svc.AfterFunc(time.Duration(100+i)*time.Millisecond, f)
			}
			if err := svc.Close(); err != nil {
				t.Fatalf("svc.Close(): %v", err)
			}
			equal(t, svc.Pending(), 0)
			for _, tm := range timers {
				if tm.Stop() {
					t.Error("Stop after Close")
				}
				if tm.Reset(time.Millisecond) {
					t.Error("Reset after Close")
				}
			}
			late := svc.AfterFunc(0, f)
			time.Sleep(250 * time.Millisecond) // past every discarded deadline
			if got := fired.Load(); got != 0 {
				t.Errorf("a timer fired after Close: fired.Load() = %v, want 0", got)
			}
			if late.Stop() {
				t.Error("Stop of a timer armed after Close")
			}
			if err := svc.Close(); !errors.Is(err, timerwheel.ErrClosed) {
				t.Errorf("svc.Close() = %v, want %v", err, timerwheel.ErrClosed)
			}
		})
	}
}

// TestCloseWaitsForRunningCallback checks that Close returns only after an
// f that had started has returned, in both modes.
func TestCloseWaitsForRunningCallback(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			svc := timerwheel.NewService(mode.opts...)
			started, release := make(chan struct{}), make(chan struct{})
			var returned atomic.Bool
			svc.AfterFunc(0, func() {
				close(started)
				<-release
				returned.Store(true)
			})
			<-started
			closed := make(chan error)
			go func() { closed <- svc.Close() }()
			select {
			case <-closed:
				t.Fatal("Close returned while f was running")
			case <-time.After(30 * time.Millisecond):
			}
			close(release)
			if err := <-closed; err != nil {
				t.Fatalf("<-closed: %v", err)
			}
			if !returned.Load() {
				t.Error("Close returned before the running callback did")
			}
		})
	}
}

// TestInlineCallbackMayUseService checks that an inline f may start and
// stop timers of its own Service and lock every shard: no lock is held while
// f runs.
func TestInlineCallbackMayUseService(t *testing.T) {
	svc := timerwheel.NewService(timerwheel.WithInlineCallbacks(), timerwheel.WithShards(2))
	defer svc.Close()
	done := make(chan struct{})
	var step func(n int) func()
	step = func(n int) func() {
		return func() {
			if n == 0 {
				close(done)
				return
			}
			svc.AfterFunc(time.Hour, func() {}).Stop()
			_ = svc.Pending() // locks every shard
			svc.AfterFunc(time.Millisecond, step(n-1))
		}
	}
	svc.AfterFunc(time.Millisecond, step(10))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("chain of inline callbacks stalled")
	}
}

// TestDriverSleepsWhenIdle checks that drivers never busy-poll: with no
// timer pending they do not wake at all, and a few timers cost a few wakes.
func TestDriverSleepsWhenIdle(t *testing.T) {
	svc := timerwheel.NewService(timerwheel.WithShards(2))
	defer svc.Close()
	if !eventually(t, time.Second, func() bool { return svc.DriverWakes() == 2 }) {
		t.Fatalf("DriverWakes() = %d after a second, want 2 (one per shard)", svc.DriverWakes())
	}
	time.Sleep(50 * time.Millisecond)
	equal(t, svc.DriverWakes(), uint64(2), "idle drivers woke")

	var wg sync.WaitGroup
	wg.Add(3)
	for i := range 3 {
		svc.AfterFunc(time.Duration(5+i)*time.Millisecond, wg.Done)
	}
	svc.AfterFunc(time.Hour, func() {}).Stop() // a stopped timer arms nothing lasting
	wg.Wait()
	time.Sleep(50 * time.Millisecond)
	wakes := svc.DriverWakes()
	if wakes > uint64(2+3*4) {
		t.Errorf("wakes for three timers: wakes = %v, want <= %v", wakes, uint64(2+3*4))
	}
	time.Sleep(50 * time.Millisecond)
	equal(t, svc.DriverWakes(), wakes, "drivers woke with nothing pending")
}

func TestServiceMisusePanics(t *testing.T) {
	svc := timerwheel.NewService(timerwheel.WithShards(1))
	defer svc.Close()
	mustPanicWith(t, timerwheel.ErrNilFunc, func() { svc.AfterFunc(time.Second, nil) })
	var zero timerwheel.Timer
	var zeroSvc timerwheel.Service
	mustPanicWith(t, timerwheel.ErrUninitializedService, func() { zeroSvc.AfterFunc(time.Second, func() {}) })
	mustPanicWith(t, timerwheel.ErrUninitializedService, func() { _ = zeroSvc.Close() })
	mustPanicWith(t, timerwheel.ErrUninitializedTimer, func() { zero.Stop() })
	mustPanicWith(t, timerwheel.ErrUninitializedTimer, func() { zero.Reset(time.Second) })
}

func TestServiceOptions(t *testing.T) {
	svc := timerwheel.NewService()
	equal(t, svc.Shards(), runtime.GOMAXPROCS(0))
	equal(t, svc.Tick(), timerwheel.DefaultTick)
	if err := svc.Close(); err != nil {
		t.Fatalf("svc.Close(): %v", err)
	}
	svc = timerwheel.NewService(timerwheel.WithShards(5), timerwheel.WithTick(3*time.Millisecond))
	equal(t, svc.Shards(), 5)
	equal(t, svc.Tick(), 3*time.Millisecond)
	if err := svc.Close(); err != nil {
		t.Fatalf("svc.Close(): %v", err)
	}
}

// arm is one scheduling of a stress timer: f must run once, not before
// earliest, unless a later Stop or Reset returned true.
type arm struct {
	earliest  time.Time
	cancelled bool
}

// stressTimer is a timer driven by one goroutine of the stress test.
type stressTimer struct {
	t    *timerwheel.Timer
	arms []arm // written by the owning goroutine only

	mu    sync.Mutex
	fires []time.Time // appended by f
}

// TestStressAfterFuncStopReset has many goroutines start, stop and reset
// timers at once (run it with -race). Every arm that no Stop or Reset
// cancelled fires exactly once, and matching fire times to arms shows none
// fired early.
func TestStressAfterFuncStopReset(t *testing.T) {
	goroutines, perG, ops := 16, 1000, 6
	if testing.Short() {
		goroutines, perG, ops = 4, 250, 4
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			svc := timerwheel.NewService(append(mode.opts, timerwheel.WithShards(4))...)
			var fired atomic.Int64
			all := make([][]*stressTimer, goroutines)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					all[g] = stressGoroutine(svc, perG, ops, &fired, uint64(g))
				})
			}
			wg.Wait()
			want := int64(0)
			for _, ts := range all {
				for _, st := range ts {
					for _, a := range st.arms {
						if !a.cancelled {
							want++
						}
					}
				}
			}
			ok := eventually(t, 10*time.Second, func() bool { return fired.Load() >= want })
			time.Sleep(20 * time.Millisecond) // room for a wrong extra fire to show
			if err := svc.Close(); err != nil {
				t.Fatalf("svc.Close(): %v", err)
			}
			if !ok {
				t.Fatalf("fired %d of %d", fired.Load(), want)
			}
			if got := fired.Load(); got != want {
				t.Fatalf("fired %d, want %d", got, want)
			}
			for _, ts := range all {
				for _, st := range ts {
					checkArms(t, st)
				}
			}
			t.Logf("%d timers, %d arms fired", goroutines*perG, want)
		})
	}
}

// stressGoroutine starts perG timers and applies ops random Stop, Reset or
// sleep operations to them, recording each arm.
func stressGoroutine(svc *timerwheel.Service, perG, ops int, fired *atomic.Int64, seed uint64) []*stressTimer {
	r := rand.New(rand.NewPCG(seed, 99))
	dur := func() time.Duration { return time.Duration(r.IntN(3000)-300) * time.Microsecond }
	ts := make([]*stressTimer, perG)
	for i := range ts {
		st := &stressTimer{}
		f := func() {
			st.mu.Lock()
			st.fires = append(st.fires, time.Now())
			st.mu.Unlock()
			fired.Add(1)
		}
		d, start := dur(), time.Now()
		st.t = svc.AfterFunc(d, f)
		st.arms = append(st.arms, arm{earliest: start.Add(d)})
		ts[i] = st
	}
	for range ops * perG {
		st := ts[r.IntN(perG)]
		switch r.IntN(5) {
		case 0, 1:
			if st.t.Stop() {
				st.arms[len(st.arms)-1].cancelled = true
			}
		case 2, 3:
			d, start := dur(), time.Now()
			if st.t.Reset(d) {
				st.arms[len(st.arms)-1].cancelled = true
			}
			st.arms = append(st.arms, arm{earliest: start.Add(d)})
		default:
			if r.IntN(20) == 0 {
				time.Sleep(time.Duration(r.IntN(500)) * time.Microsecond)
			}
		}
	}
	return ts
}

// checkArms matches the fire times of st to its uncancelled arms: sorted,
// the i-th fire must be no earlier than the i-th earliest time.
func checkArms(t *testing.T, st *stressTimer) {
	t.Helper()
	var earliest []time.Time
	for _, a := range st.arms {
		if !a.cancelled {
			earliest = append(earliest, a.earliest)
		}
	}
	st.mu.Lock()
	fires := slices.Clone(st.fires)
	st.mu.Unlock()
	if len(fires) != len(earliest) {
		t.Fatalf("len(fires) = %d, want %d: %v", len(fires), len(earliest), fires)
	}
	slices.SortFunc(earliest, time.Time.Compare)
	slices.SortFunc(fires, time.Time.Compare)
	for i := range fires {
		if fires[i].Before(earliest[i]) {
			t.Fatalf("fired %v before its earliest time", earliest[i].Sub(fires[i]))
		}
	}
}

// TestConcurrentStopsRaceWithFiring has two goroutines stop the same timers
// while they fire: for each timer exactly one of its f and one Stop wins.
func TestConcurrentStopsRaceWithFiring(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	svc := timerwheel.NewService(timerwheel.WithShards(2))
	defer svc.Close()
	timers := make([]*timerwheel.Timer, n)
	fires := make([]atomic.Int32, n)
	stops := make([]atomic.Int32, n)
	for i := range timers {
		timers[i] = svc.AfterFunc(time.Duration(rand.IntN(4000))*time.Microsecond, func() { fires[i].Add(1) })
	}
	var wg sync.WaitGroup
	for _, reverse := range []bool{false, true} {
		wg.Go(func() {
			for k := range n {
				i := k
				if reverse {
					i = n - 1 - k
				}
				if timers[i].Stop() {
					stops[i].Add(1)
				}
				if k%64 == 0 {
					time.Sleep(100 * time.Microsecond)
				}
			}
		})
	}
	wg.Wait()
	if !eventually(t, 5*time.Second, func() bool { return svc.Pending() == 0 }) {
		t.Fatalf("Pending() = %d after 5s, want 0", svc.Pending())
	}
	time.Sleep(20 * time.Millisecond)
	// Close waits for every started f.
	if err := svc.Close(); err != nil {
		t.Fatalf("svc.Close(): %v", err)
	}
	for i := range n {
		if f, s := fires[i].Load(), stops[i].Load(); f+s != 1 {
			t.Fatalf("timer %d: fires %d stops %d, want one in all", i, f, s)
		}
	}
}
