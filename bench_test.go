package blitz_test

import (
	"context"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// The benchmarks of issue 3. Each runs the runtime ("blitz") and the
// plain-goroutine way of doing the same thing side by side in one run; the
// targets are ratios between the two (see BENCHMARKS.md).

// newBenchRuntime starts a runtime for a benchmark and shuts it down at the
// end.
func newBenchRuntime(b *testing.B, cfg blitz.Config) *blitz.Runtime {
	b.Helper()
	rt, err := blitz.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := rt.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	})
	return rt
}

// forBackends runs f as name/auto, with the default Config, and as
// name/none, with BackendNone: the second shows the scheduler's own costs
// apart from parking in the I/O driver.
func forBackends(b *testing.B, name string, f func(*testing.B, blitz.Config)) {
	b.Run(name+"/auto", func(b *testing.B) { f(b, blitz.Config{}) })
	b.Run(name+"/none", func(b *testing.B) { f(b, blitz.Config{Backend: blitz.BackendNone}) })
}

// forSpawns runs f for both ways of spawning a future that is a value:
// blitz holds it in the task (SpawnValue, SpawnValueOn; value is true),
// blitz-iface in an interface (Spawn, SpawnOn), each with both backends.
func forSpawns(b *testing.B, f func(b *testing.B, cfg blitz.Config, value bool)) {
	forBackends(b, "blitz", func(b *testing.B, cfg blitz.Config) { f(b, cfg, true) })
	forBackends(b, "blitz-iface", func(b *testing.B, cfg blitz.Config) { f(b, cfg, false) })
}

// How the benchmarks that spawn from tasks spawn: through an interface
// (Spawn), by value (SpawnValue), or by value without a handle
// (SpawnValueDetached, whose task objects the workers recycle).
const (
	spawnIface = iota
	spawnValue
	spawnDetached
)

// forSpawnModes is forSpawns with a third way, blitz-detached: by value
// and without a JoinHandle, like the goroutine side, which has none.
func forSpawnModes(b *testing.B, f func(b *testing.B, cfg blitz.Config, mode int)) {
	forBackends(b, "blitz", func(b *testing.B, cfg blitz.Config) { f(b, cfg, spawnValue) })
	forBackends(b, "blitz-iface", func(b *testing.B, cfg blitz.Config) { f(b, cfg, spawnIface) })
	forBackends(b, "blitz-detached", func(b *testing.B, cfg blitz.Config) { f(b, cfg, spawnDetached) })
}

// spawnAll is the root task of BenchmarkSpawnMany: its one poll spawns n
// trivial tasks.
type spawnAll struct {
	n int
	l *latch
}

func (s *spawnAll) Poll(cx *future.Context) (struct{}, bool) {
	for range s.n {
		blitz.Spawn[struct{}](cx, doneFuture{s.l})
	}
	return struct{}{}, true
}

// BenchmarkSpawnMany spawns b.N trivial tasks from inside one task and waits
// for all of them: ns/op is the cost of one task, spawn to completion.
func BenchmarkSpawnMany(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		rt := newBenchRuntime(b, blitz.Config{})
		b.ReportAllocs()
		l := newLatch(b.N)
		blitz.SpawnOn[struct{}](rt.Handle(), &spawnAll{n: b.N, l: l})
		<-l.done
	})
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		l := newLatch(b.N)
		go func() {
			for range b.N {
				go l.countDown()
			}
		}()
		<-l.done
	})
}

// BenchmarkSpawnRemote spawns b.N trivial tasks from a goroutine outside the
// runtime (through the global queue) and waits for all of them.
func BenchmarkSpawnRemote(b *testing.B) {
	forSpawns(b, func(b *testing.B, cfg blitz.Config, value bool) {
		rt := newBenchRuntime(b, cfg)
		b.ReportAllocs()
		l := newLatch(b.N)
		h := rt.Handle()
		for range b.N {
			if value {
				blitz.SpawnValueOn[struct{}](h, doneFuture{l})
			} else {
				blitz.SpawnOn[struct{}](h, doneFuture{l})
			}
		}
		<-l.done
	})
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		l := newLatch(b.N)
		for range b.N {
			go l.countDown()
		}
		<-l.done
	})
}

// BenchmarkSpawnRemotePaired is BenchmarkSpawnRemote with each op 1,000
// spawns from outside, the blitz run (by value with a handle dropped, and
// detached) and the goroutine run alternating inside each op (see paired).
func BenchmarkSpawnRemotePaired(b *testing.B) {
	const tasks = 1000
	for _, detached := range []bool{false, true} {
		name := "value"
		if detached {
			name = "detached"
		}
		b.Run(name, func(b *testing.B) {
			h := newBenchRuntime(b, blitz.Config{}).Handle()
			paired(b, tasks, "task", func() {
				l := newLatch(tasks)
				for range tasks {
					if detached {
						blitz.SpawnValueDetachedOn[struct{}](h, doneFuture{l})
					} else {
						blitz.SpawnValueOn[struct{}](h, doneFuture{l})
					}
				}
				<-l.done
			}, func() {
				l := newLatch(tasks)
				for range tasks {
					go l.countDown()
				}
				<-l.done
			})
		})
	}
}

// yieldTask yields left times, then counts down its latch.
type yieldTask struct {
	left int
	y    blitz.YieldFuture
	l    *latch
}

func (t *yieldTask) Poll(cx *future.Context) (struct{}, bool) {
	for t.left > 0 {
		if _, ok := t.y.Poll(cx); !ok {
			return struct{}{}, false
		}
		t.y.Reset()
		t.left--
	}
	t.l.countDown()
	return struct{}{}, true
}

// yieldOp spawns tasks tasks on h that each yield yields times, and waits
// for them: one op of BenchmarkYieldMany's blitz side.
func yieldOp(h blitz.Handle, tasks, yields int) {
	l := newLatch(tasks)
	for range tasks {
		blitz.SpawnOn[struct{}](h, &yieldTask{left: yields, l: l})
	}
	<-l.done
}

// goYieldOp is yieldOp with goroutines and runtime.Gosched.
func goYieldOp(tasks, yields int) {
	var wg sync.WaitGroup
	wg.Add(tasks)
	for range tasks {
		go func() {
			defer wg.Done()
			for range yields {
				goruntime.Gosched()
			}
		}()
	}
	wg.Wait()
}

// BenchmarkYieldMany runs 1,000 tasks that each yield 1,000 times; an op is
// the whole run and ns/yield the cost of one yield.
func BenchmarkYieldMany(b *testing.B) {
	const tasks, yields = 1000, 1000
	b.Run("blitz", func(b *testing.B) {
		h := newBenchRuntime(b, blitz.Config{}).Handle()
		b.ReportAllocs()
		for range b.N {
			yieldOp(h, tasks, yields)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks*yields), "ns/yield")
	})
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			goYieldOp(tasks, yields)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks*yields), "ns/yield")
	})
}

// paired runs blitzOp and goOp one after the other in each of b.N ops, so
// that both see the same machine: on a shared or noisy machine the ratio
// it reports (blitz/go) holds where two sub-benchmarks run seconds apart do
// not. units is how many of unit one op holds; the metrics are ns/unit
// and go-ns/unit, the two sides' figures, and ratio.
func paired(b *testing.B, units int, unit string, blitzOp, goOp func()) {
	var blitz, gor time.Duration
	for range b.N {
		start := time.Now()
		blitzOp()
		blitz += time.Since(start)
		start = time.Now()
		goOp()
		gor += time.Since(start)
	}
	n := float64(b.N * units)
	b.ReportMetric(float64(blitz.Nanoseconds())/n, "ns/"+unit)
	b.ReportMetric(float64(gor.Nanoseconds())/n, "go-ns/"+unit)
	b.ReportMetric(float64(blitz)/float64(gor), "ratio")
}

// BenchmarkYieldManyPaired is BenchmarkYieldMany with the blitz run and the
// goroutine run alternating inside each op (see paired).
func BenchmarkYieldManyPaired(b *testing.B) {
	const tasks, yields = 1000, 1000
	h := newBenchRuntime(b, blitz.Config{}).Handle()
	paired(b, tasks*yields, "yield", func() { yieldOp(h, tasks, yields) }, func() { goYieldOp(tasks, yields) })
}

// BenchmarkYieldAlone runs one task that yields b.N times on a runtime of
// one worker: ns/op is the cost of a yield when nothing else is runnable,
// which includes a look at the I/O and the timers (the driver runs before
// a yielded task runs again). The none backend shows the yield without
// I/O.
func BenchmarkYieldAlone(b *testing.B) {
	for _, backend := range []string{blitz.BackendAuto, blitz.BackendNone} {
		name := backend
		if name == "" {
			name = "auto"
		}
		b.Run(name, func(b *testing.B) {
			rt := newBenchRuntime(b, blitz.Config{Workers: 1, Backend: backend})
			b.ReportAllocs()
			l := newLatch(1)
			blitz.SpawnOn[struct{}](rt.Handle(), &yieldTask{left: b.N, l: l})
			<-l.done
		})
	}
}

// pinger spawns its ponger, sends it a ping through one oneshot and waits
// for the pong through another.
type pinger struct {
	sent       bool
	mode       int // how to spawn the ponger
	ping, pong *oneshot
	l          *latch
}

func (p *pinger) Poll(cx *future.Context) (struct{}, bool) {
	if !p.sent {
		p.sent = true
		p.ping, p.pong = new(oneshot), new(oneshot)
		switch p.mode {
		case spawnValue:
			blitz.SpawnValue[struct{}](cx, ponger{ping: p.ping, pong: p.pong})
		case spawnDetached:
			blitz.SpawnValueDetached[struct{}](cx, ponger{ping: p.ping, pong: p.pong})
		default:
			blitz.Spawn[struct{}](cx, &ponger{ping: p.ping, pong: p.pong})
		}
		p.ping.send(cx)
	}
	if _, ok := p.pong.Poll(cx); !ok {
		return struct{}{}, false
	}
	p.l.countDown()
	return struct{}{}, true
}

// ponger answers one ping.
type ponger struct{ ping, pong *oneshot }

func (p *ponger) Poll(cx *future.Context) (struct{}, bool) {
	if _, ok := p.ping.Poll(cx); !ok {
		return struct{}{}, false
	}
	p.pong.send(cx)
	return struct{}{}, true
}

// goPingPongOp runs pairs ping-pongs with goroutines and channels: one op
// of BenchmarkPingPong's goroutine side.
func goPingPongOp(pairs int) {
	l := newLatch(pairs)
	for range pairs {
		go func() {
			ping, pong := make(chan struct{}, 1), make(chan struct{}, 1)
			go func() {
				<-ping
				pong <- struct{}{}
			}()
			ping <- struct{}{}
			<-pong
			l.countDown()
		}()
	}
	<-l.done
}

// BenchmarkPingPong runs 1,000 concurrent pairs per op: each pinger spawns a
// ponger and they exchange a ping and a pong through two oneshots (Tokio's
// ping_pong). ns/ping is the cost of one exchange, spawn included.
func BenchmarkPingPong(b *testing.B) {
	const pairs = 1000
	forSpawnModes(b, func(b *testing.B, cfg blitz.Config, mode int) { benchPingPong(b, cfg, pairs, mode) })
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			goPingPongOp(pairs)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pairs), "ns/ping")
	})
}

// BenchmarkPingPongPaired is BenchmarkPingPong's detached blitz side and
// its goroutine side alternating inside each op (see paired).
func BenchmarkPingPongPaired(b *testing.B) {
	const pairs = 1000
	h := newBenchRuntime(b, blitz.Config{}).Handle()
	paired(b, pairs, "ping", func() { pingPongOp(h, pairs, spawnDetached) }, func() { goPingPongOp(pairs) })
}

// benchPingPong is BenchmarkPingPong's blitz side with cfg, spawning as
// mode says.
func benchPingPong(b *testing.B, cfg blitz.Config, pairs int, mode int) {
	h := newBenchRuntime(b, cfg).Handle()
	b.ReportAllocs()
	for range b.N {
		pingPongOp(h, pairs, mode)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pairs), "ns/ping")
}

// pingPongOp runs pairs ping-pongs on h, each pinger spawned from outside
// as mode says: one op of BenchmarkPingPong's blitz side.
func pingPongOp(h blitz.Handle, pairs, mode int) {
	l := newLatch(pairs)
	for range pairs {
		switch mode {
		case spawnValue:
			blitz.SpawnValueOn[struct{}](h, pinger{l: l, mode: mode})
		case spawnDetached:
			blitz.SpawnValueDetachedOn[struct{}](h, pinger{l: l, mode: mode})
		default:
			blitz.SpawnOn[struct{}](h, &pinger{l: l})
		}
	}
	<-l.done
}

// chain spawns the next link until depth reaches zero.
type chain struct {
	depth int
	mode  int // how to spawn the next link
	l     *latch
}

func (c chain) Poll(cx *future.Context) (struct{}, bool) {
	switch {
	case c.depth == 0:
		c.l.countDown()
	case c.mode == spawnValue:
		blitz.SpawnValue[struct{}](cx, chain{depth: c.depth - 1, mode: c.mode, l: c.l})
	case c.mode == spawnDetached:
		blitz.SpawnValueDetached[struct{}](cx, chain{depth: c.depth - 1, mode: c.mode, l: c.l})
	default:
		blitz.Spawn[struct{}](cx, &chain{depth: c.depth - 1, l: c.l})
	}
	return struct{}{}, true
}

// BenchmarkChainedSpawn runs a chain of 1,000 tasks per op, each spawning the
// next (Tokio's chained_spawn); ns/spawn is the cost of one link.
func BenchmarkChainedSpawn(b *testing.B) {
	const depth = 1000
	forSpawnModes(b, func(b *testing.B, cfg blitz.Config, mode int) { benchChained(b, cfg, depth, mode) })
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		var link func(int, *latch)
		link = func(n int, l *latch) {
			if n == 0 {
				l.countDown()
				return
			}
			go link(n-1, l)
		}
		for range b.N {
			l := newLatch(1)
			go link(depth, l)
			<-l.done
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/spawn")
	})
}

// benchChained is BenchmarkChainedSpawn's blitz side with cfg, spawning
// as mode says (the first link from outside, the others from tasks).
func benchChained(b *testing.B, cfg blitz.Config, depth int, mode int) {
	rt := newBenchRuntime(b, cfg)
	h := rt.Handle()
	b.ReportAllocs()
	for range b.N {
		l := newLatch(1)
		switch mode {
		case spawnValue:
			blitz.SpawnValueOn[struct{}](h, chain{depth: depth, mode: mode, l: l})
		case spawnDetached:
			blitz.SpawnValueDetachedOn[struct{}](h, chain{depth: depth, mode: mode, l: l})
		default:
			blitz.SpawnOn[struct{}](h, chain{depth: depth, l: l})
		}
		<-l.done
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/spawn")
}

// BenchmarkLIFO measures the ping-pong and the chained spawn with each
// LIFO mode: the single slot (Tokio's), the four-slot stack (the default),
// and none (LIFOOff, Tokio's disable_lifo_slot).
func BenchmarkLIFO(b *testing.B) {
	for _, m := range []struct {
		name string
		lifo int
	}{{"slot", scheduler.LIFOSlot}, {"stack", scheduler.LIFOStack}, {"off", scheduler.LIFOOff}} {
		b.Run("pingpong-"+m.name, func(b *testing.B) { benchPingPong(b, blitz.Config{LIFO: m.lifo}, 1000, spawnIface) })
		b.Run("chained-"+m.name, func(b *testing.B) { benchChained(b, blitz.Config{LIFO: m.lifo}, 1000, spawnIface) })
	}
}

// idleFuture keeps the Waker of its first poll and never completes: a task
// parked on a waker that never fires.
type idleFuture struct {
	wk     waker.Waker
	polled *atomic.Int64
}

func (f *idleFuture) Poll(cx *future.Context) (struct{}, bool) {
	if f.wk.IsZero() {
		f.wk = cx.Waker()
		f.polled.Add(1)
	}
	return struct{}{}, false
}

// liveBytes returns the heap in use plus the goroutine stacks in use, after
// a collection.
func liveBytes() uint64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// BenchmarkIdleTaskMemory parks 10^6 tasks on wakers that never fire and
// reports the memory each one holds (heap plus stacks) as bytes/task; the
// goroutine side parks 10^5 goroutines on a channel receive (10^6 take 15 s
// to create and collect on the 2-core machine, for the same bytes/task).
func BenchmarkIdleTaskMemory(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	forSpawns(b, func(b *testing.B, cfg blitz.Config, value bool) {
		rt := newBenchRuntime(b, cfg)
		h := rt.Handle()
		handles := make([]blitz.JoinHandle[struct{}], n)
		var perTask float64
		for range b.N {
			var polled atomic.Int64
			before := liveBytes()
			for i := range handles {
				if value {
					handles[i] = blitz.SpawnValueOn[struct{}](h, idleFuture{polled: &polled})
				} else {
					handles[i] = blitz.SpawnOn[struct{}](h, &idleFuture{polled: &polled})
				}
			}
			for polled.Load() < int64(n) {
				time.Sleep(time.Millisecond)
			}
			perTask = float64(liveBytes()-before) / float64(n)
			for _, jh := range handles {
				jh.Cancel()
			}
			for _, jh := range handles {
				if _, err := jh.Wait(context.Background()); err == nil {
					b.Fatal("idle task completed")
				}
			}
			// Drop the finished tasks before the next round's baseline.
			clear(handles)
		}
		b.ReportMetric(perTask, "bytes/task")
	})
	b.Run("goroutines", func(b *testing.B) {
		n := n / 10
		var perTask float64
		for range b.N {
			var started sync.WaitGroup
			started.Add(n)
			release := make(chan struct{})
			var done sync.WaitGroup
			done.Add(n)
			before := liveBytes()
			for range n {
				go func() {
					started.Done()
					<-release
					done.Done()
				}()
			}
			started.Wait()
			perTask = float64(liveBytes()-before) / float64(n)
			close(release)
			done.Wait()
		}
		b.ReportMetric(perTask, "bytes/task")
	})
}

// BenchmarkTimerInsertCancel arms a one-second timer and cancels it: a
// reused SleepFuture polled once in a runtime's Context, against
// time.AfterFunc and Stop.
func BenchmarkTimerInsertCancel(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		rt := newBenchRuntime(b, blitz.Config{})
		b.ReportAllocs()
		var sf blitz.SleepFuture
		_, err := blitz.BlockOn(context.Background(), rt.Handle(),
			future.PollFn(func(cx *future.Context) (struct{}, bool) {
				b.ResetTimer()
				for range b.N {
					sf.ResetAfter(time.Second)
					sf.Poll(cx)
					sf.Cancel()
				}
				return struct{}{}, true
			}))
		if err != nil {
			b.Fatal(err)
		}
	})
	b.Run("timeAfterFunc", func(b *testing.B) {
		b.ReportAllocs()
		f := func() {}
		for range b.N {
			t := time.AfterFunc(time.Second, f)
			t.Stop()
		}
	})
}

// sleeper sleeps a series of durations and records how late each sleep
// ended.
type sleeper struct {
	durs  []time.Duration
	i     int
	sleep blitz.SleepFuture
	late  []time.Duration
	l     *latch
}

func (s *sleeper) Poll(cx *future.Context) (struct{}, bool) {
	for s.i < len(s.durs) {
		if s.sleep.Deadline().IsZero() {
			s.sleep.Reset(time.Now().Add(s.durs[s.i]))
		}
		if _, ok := s.sleep.Poll(cx); !ok {
			return struct{}{}, false
		}
		s.late[s.i] = time.Since(s.sleep.Deadline())
		s.sleep.Reset(time.Time{})
		s.i++
	}
	s.l.countDown()
	return struct{}{}, true
}

// BenchmarkSleepLateness runs 10^4 concurrent sleepers of 10 sleeps each
// (10^5 sleeps of 1 to 50 ms) and reports the p50 and p99 lateness, the time
// from a deadline to the moment the sleeping code runs again. For other
// shapes: BLITZ_BENCH_SLEEPERS=n runs n sleepers of 200 sleeps each (1 for
// the lateness of a lone timer), BLITZ_BENCH_TICK sets Config.TimerTick
// (250us), BLITZ_BENCH_WORKERS Config.Workers and BLITZ_BENCH_BACKEND
// Config.Backend; BLITZ_BENCH_HIST=1 logs the runtime's own histogram of
// the timers' lateness at firing.
func BenchmarkSleepLateness(b *testing.B) {
	sleepers, each := 10_000, 10
	if n, _ := strconv.Atoi(os.Getenv("BLITZ_BENCH_SLEEPERS")); n > 0 {
		sleepers, each = n, 200
	}
	durs := func(i int) []time.Duration {
		d := make([]time.Duration, each)
		for j := range d {
			d[j] = time.Duration(1+(i*7+j*13)%50) * time.Millisecond
		}
		return d
	}
	report := func(b *testing.B, late []time.Duration) {
		slices.Sort(late)
		b.ReportMetric(float64(late[len(late)/2].Microseconds()), "p50-us")
		b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "p99-us")
	}
	b.Run("blitz", func(b *testing.B) {
		tick, _ := time.ParseDuration(os.Getenv("BLITZ_BENCH_TICK"))
		wk, _ := strconv.Atoi(os.Getenv("BLITZ_BENCH_WORKERS"))
		rt := newBenchRuntime(b, blitz.Config{TimerTick: tick, Workers: wk, Backend: os.Getenv("BLITZ_BENCH_BACKEND")})
		h := rt.Handle()
		var all []time.Duration
		for range b.N {
			l := newLatch(sleepers)
			ss := make([]*sleeper, sleepers)
			for i := range ss {
				ss[i] = &sleeper{durs: durs(i), late: make([]time.Duration, each), l: l}
				blitz.SpawnOn[struct{}](h, ss[i])
			}
			<-l.done
			for _, s := range ss {
				all = append(all, s.late...)
			}
		}
		report(b, all)
		if os.Getenv("BLITZ_BENCH_HIST") != "" {
			m := rt.Metrics().Timers.Lateness
			b.Logf("fire lateness: bounds %v counts %v", m.Bounds, m.Counts)
		}
	})
	b.Run("goroutines", func(b *testing.B) {
		var all []time.Duration
		for range b.N {
			var wg sync.WaitGroup
			lates := make([][]time.Duration, sleepers)
			for i := range lates {
				wg.Add(1)
				go func() {
					defer wg.Done()
					late := make([]time.Duration, each)
					for j, d := range durs(i) {
						deadline := time.Now().Add(d)
						time.Sleep(d)
						late[j] = time.Since(deadline)
					}
					lates[i] = late
				}()
			}
			wg.Wait()
			for _, l := range lates {
				all = append(all, l...)
			}
		}
		report(b, all)
	})
}

// identityWorkloads are the workloads of BenchmarkIdentityPaired, each one
// op on rt: a chain of 1,000 spawns by value, 100 tasks yielding 100 times,
// 1,000 ping-pongs (each spawning its ponger by value).
var identityWorkloads = []struct {
	name string
	run  func(rt *blitz.Runtime)
}{
	{"chained", func(rt *blitz.Runtime) {
		l := newLatch(1)
		blitz.SpawnValueOn[struct{}](rt.Handle(), chain{depth: 1000, mode: spawnValue, l: l})
		<-l.done
	}},
	{"yield", func(rt *blitz.Runtime) {
		l := newLatch(100)
		for range 100 {
			blitz.SpawnOn[struct{}](rt.Handle(), &yieldTask{left: 100, l: l})
		}
		<-l.done
	}},
	{"pingpong", func(rt *blitz.Runtime) {
		l := newLatch(1000)
		for range 1000 {
			blitz.SpawnValueOn[struct{}](rt.Handle(), pinger{l: l, mode: spawnValue})
		}
		<-l.done
	}},
}

// BenchmarkIdentityPaired measures what each part of task identity costs:
// the same workload on two runtimes, alternating inside each op (and which
// goes first) so that a noisy machine does not bias the ratio (see
// BenchmarkYieldManyPaired). "identity" compares the default (ids,
// parents, ages, poll counts, waits) with all of it off; the others compare
// the default with one costly switch on. ratio is the median of the ops'
// on/off ratios, which a burst of load from elsewhere moves less than a
// ratio of sums; on-ms and off-ms are the two sides' mean per op.
func BenchmarkIdentityPaired(b *testing.B) {
	def := blitz.Config{}
	variants := []struct {
		name    string
		off, on blitz.Config
	}{
		{"identity", blitz.WithoutTaskIdentity(def), def},
		{"spawnsites", def, blitz.Config{SpawnSites: true}},
		{"polltiming", def, blitz.Config{PollTiming: true}},
		{"labels", def, blitz.Config{ProfileLabels: true}},
	}
	for _, w := range identityWorkloads {
		for _, v := range variants {
			b.Run(w.name+"/"+v.name, func(b *testing.B) {
				off, on := newBenchRuntime(b, v.off), newBenchRuntime(b, v.on)
				var tOff, tOn time.Duration
				ratios := make([]float64, 0, b.N)
				for i := range b.N {
					t0 := time.Now()
					if i%2 == 0 {
						w.run(off)
					} else {
						w.run(on)
					}
					t1 := time.Now()
					if i%2 == 0 {
						w.run(on)
					} else {
						w.run(off)
					}
					t2 := time.Now()
					dOff, dOn := t1.Sub(t0), t2.Sub(t1)
					if i%2 == 1 {
						dOff, dOn = dOn, dOff
					}
					tOff += dOff
					tOn += dOn
					ratios = append(ratios, float64(dOn)/float64(dOff))
				}
				slices.Sort(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "ratio")
				b.ReportMetric(float64(tOn.Nanoseconds())/float64(b.N)/1e6, "on-ms")
				b.ReportMetric(float64(tOff.Nanoseconds())/float64(b.N)/1e6, "off-ms")
			})
		}
	}
}

// BenchmarkSpawnWait is goroutine code handing work to the runtime and
// waiting for it: a spawn from outside the workers and JoinHandle.Wait,
// beside a goroutine started and waited for on a channel. One op is one
// spawn and its wait.
func BenchmarkSpawnWait(b *testing.B) {
	ctx := context.Background()
	b.Run("blitz", func(b *testing.B) {
		rt := newBenchRuntime(b, blitz.Config{})
		h := rt.Handle()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := blitz.SpawnValueOn[int](h, answerFuture{}).Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		done := make(chan int)
		for b.Loop() {
			go func() { done <- 42 }()
			<-done
		}
	})
}

// answerFuture completes at its first poll with 42.
type answerFuture struct{}

func (answerFuture) Poll(*future.Context) (int, bool) { return 42, true }
