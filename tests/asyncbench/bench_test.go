package asyncbench

import (
	"bufio"
	"bytes"
	"context"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// liveBytes returns the heap in use plus the goroutine stacks in use, after
// a collection.
func liveBytes() uint64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// mallocs returns the number of heap objects allocated so far.
func mallocs() uint64 {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.Mallocs
}

// rssBytes returns the process's resident set after returning free memory
// to the system, from /proc/self/status; false where there is none.
func rssBytes() (uint64, bool) {
	debug.FreeOSMemory()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// idleScript is what each idle handler reads before it waits at the gate:
// a read, a write (of 1), a read, a read of EOF; it then writes and returns
// its total, 4.
var idleScript = []int{2, 3}

const idleTotal = 4

// idleMeasure is what measureIdle found, per task (or goroutine).
type idleMeasure struct {
	bytes  float64 // heap and stacks held while idle
	rss    float64 // resident set held while idle; 0 where unknown
	allocs float64 // heap objects allocated from spawning to idle
}

// measureIdle starts n handlers of the given kind, each over its own
// connection and all at one gate, measures the memory they hold once every
// one waits at the gate, releases them and checks what they return. The
// connections, the handles and the result slots are allocated before the
// baseline, so what is measured is the task (or goroutine) itself.
func measureIdle(tb testing.TB, h blitz.Handle, kind string, n int) idleMeasure {
	tb.Helper()
	conns := make([]*Conn, n)
	for i := range conns {
		conns[i] = NewConn(idleScript...)
		conns[i].Written = make([]int, 0, 2)
	}
	g := NewGate()
	handles := make([]blitz.JoinHandle[future.Result[int]], n)
	results := make([]outcome, n)
	var wg sync.WaitGroup // the goroutines, when kind is "goroutine"
	released := false
	defer func() {
		if !released { // a watchdog failed: let the waiters go
			g.Release()
		}
	}()
	rssBefore, rssOK := rssBytes()
	before := liveBytes()
	mBefore := mallocs()
	for i, c := range conns {
		switch kind {
		case "generated":
			handles[i] = blitz.SpawnOn(h, handleAsync(c, g))
		case "generatedClosing":
			handles[i] = blitz.SpawnOn(h, handleClosingAsync(c, g))
		case "hand":
			handles[i] = blitz.SpawnOn[future.Result[int]](h, newHandleFuture(c, g))
		case "proposed":
			handles[i] = blitz.SpawnOn[future.Result[int]](h, newHandleProposed(c, g))
		case "goroutine":
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i].value, results[i].err = handleBlocking(c, g)
			}()
		default:
			tb.Fatalf("no kind %q", kind)
		}
	}
	waitFor(tb, 5*time.Minute, "every handler at the gate", func() bool { return g.Waiting.Load() == int64(n) })
	var m idleMeasure
	m.allocs = float64(mallocs()-mBefore) / float64(n)
	m.bytes = float64(liveBytes()-before) / float64(n)
	if rssAfter, ok := rssBytes(); ok && rssOK {
		m.rss = (float64(rssAfter) - float64(rssBefore)) / float64(n)
	}
	g.Release()
	released = true
	if kind == "goroutine" {
		wg.Wait()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for i, jh := range handles {
			res, err := jh.Wait(ctx)
			if err != nil {
				tb.Fatalf("%s handler %d: %v", kind, i, err)
			}
			results[i].value, results[i].err = res.Get()
		}
	}
	for i, r := range results {
		if r.value != idleTotal || r.err != nil {
			tb.Fatalf("%s handler %d returned %d, %v; want %d", kind, i, r.value, r.err, idleTotal)
		}
		if kind == "generatedClosing" && !conns[i].Closed {
			tb.Fatalf("%s handler %d returned without its deferred Close", kind, i)
		}
	}
	return m
}

// gatherWidth is how many results each idle gatherer collects: the first
// two are there when it starts, and it waits for the last.
const gatherWidth = 3

// gatherTotal is what each idle gatherer returns: result j is j+1, weighted
// by its position j+1.
const gatherTotal = 1*1 + 2*2 + 3*3

// measureIdleGather starts n gatherers of the given kind, each over its own
// gatherWidth oneshots of which all but the last hold their value, measures
// the memory they hold once every one waits for its last result, sends the
// last results and checks what they return. As in measureIdle, what exists
// before and after the gatherers (the oneshots, the handles) is allocated
// before the baseline.
func measureIdleGather(tb testing.TB, rt *blitz.Runtime, kind string, n int) idleMeasure {
	tb.Helper()
	last := make([]channels.OneshotSender[int], n)
	rss := make([][]channels.OneshotReceiver[int], n)
	for i := range rss {
		rss[i] = make([]channels.OneshotReceiver[int], gatherWidth)
		for j := range rss[i] {
			var s channels.OneshotSender[int]
			s, rss[i][j] = channels.NewOneshot[int]()
			if j < gatherWidth-1 {
				if err := s.Send(j + 1); err != nil {
					tb.Fatal(err)
				}
			} else {
				last[i] = s
			}
		}
	}
	sendLast := func() {
		for _, s := range last {
			if err := s.Send(gatherWidth); err != nil {
				tb.Error(err)
			}
		}
	}
	handles := make([]blitz.JoinHandle[future.Result[int]], n)
	results := make([]outcome, n)
	var wg sync.WaitGroup // the goroutines, when kind is "goroutine"
	var started atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel() // a watchdog failed: the goroutines' receives end
	polled := rt.Stats().Polled
	rssBefore, rssOK := rssBytes()
	before := liveBytes()
	mBefore := mallocs()
	for i, rs := range rss {
		switch kind {
		case "generated":
			handles[i] = blitz.SpawnOn(rt.Handle(), gatherAsync(rs))
		case "hand":
			handles[i] = blitz.SpawnOn[future.Result[int]](rt.Handle(), newGatherFuture(rs))
		case "proposed":
			handles[i] = blitz.SpawnOn[future.Result[int]](rt.Handle(), newGatherProposed(rs))
		case "goroutine":
			wg.Add(1)
			go func() {
				defer wg.Done()
				started.Add(1)
				results[i].value, results[i].err = gatherBlocking(ctx, rs)
			}()
		default:
			tb.Fatalf("no kind %q", kind)
		}
	}
	if kind == "goroutine" {
		waitFor(tb, 5*time.Minute, "every gatherer started", func() bool { return started.Load() == int64(n) })
	} else {
		// Each task takes the results that are there and waits for the
		// last in its first poll.
		waitFor(tb, 5*time.Minute, "every gatherer polled", func() bool { return rt.Stats().Polled-polled >= uint64(n) })
	}
	var m idleMeasure
	m.allocs = float64(mallocs()-mBefore) / float64(n)
	m.bytes = float64(liveBytes()-before) / float64(n)
	if rssAfter, ok := rssBytes(); ok && rssOK {
		m.rss = (float64(rssAfter) - float64(rssBefore)) / float64(n)
	}
	sendLast()
	if kind == "goroutine" {
		wg.Wait()
	} else {
		for i, jh := range handles {
			res, err := jh.Wait(ctx)
			if err != nil {
				tb.Fatalf("%s gatherer %d: %v", kind, i, err)
			}
			results[i].value, results[i].err = res.Get()
		}
	}
	for i, r := range results {
		if r.value != gatherTotal || r.err != nil {
			tb.Fatalf("%s gatherer %d returned %d, %v; want %d", kind, i, r.value, r.err, gatherTotal)
		}
	}
	return m
}

// TestIdleMeasureSmoke runs the idle measurements at a small size: every
// handler of each kind parks at the gate, every gatherer at its last result,
// holds some memory there, and returns the right total once released.
func TestIdleMeasureSmoke(t *testing.T) {
	rt := newRuntime(t, blitz.Config{})
	for _, kind := range append(futureKinds, "goroutine") {
		if m := measureIdle(t, rt.Handle(), kind, 200); m.bytes <= 0 || m.allocs <= 0 {
			t.Errorf("%s: %+v, want some bytes and allocations per handler", kind, m)
		}
	}
	for _, kind := range append(futureKinds, "goroutine") {
		if m := measureIdleGather(t, rt, kind, 200); m.bytes <= 0 || m.allocs <= 0 {
			t.Errorf("gather %s: %+v, want some bytes and allocations per gatherer", kind, m)
		}
	}
}

// BenchmarkIdle measures the memory a handler holds while it waits at the
// gate, after four awaits: the hand-written future, the generated one, the
// generated one edited as proposed_test.go says, and a goroutine running the
// same code; generatedClosing is the generated handleClosing, handle with a
// deferred Close. It reports bytes/task (heap and stacks,
// after a collection), rss-bytes/task (Linux), allocs/task (heap objects
// from the spawn to the gate) and, for the futures, struct-bytes (the
// size of the future's own struct). 10^5 tasks, or 10^4 goroutines;
// 10^3 and 10^2 with -short. Run it with -benchtime=1x.
func BenchmarkIdle(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 1_000
	}
	sizes := map[string]uintptr{
		"generated":        unsafe.Sizeof(handleAsyncFuture{}),
		"generatedClosing": unsafe.Sizeof(handleClosingAsyncFuture{}),
		"hand":             unsafe.Sizeof(handleFuture{}),
		"proposed":         unsafe.Sizeof(handleProposed{}),
	}
	for _, kind := range []string{"hand", "generated", "generatedClosing", "proposed", "goroutine"} {
		b.Run("impl="+kind, func(b *testing.B) {
			rt := newRuntime(b, blitz.Config{})
			n := n
			if kind == "goroutine" {
				n /= 10
			}
			var m idleMeasure
			for range b.N {
				m = measureIdle(b, rt.Handle(), kind, n)
			}
			b.ReportMetric(m.bytes, "bytes/task")
			b.ReportMetric(m.allocs, "allocs/task")
			if m.rss != 0 {
				b.ReportMetric(m.rss, "rss-bytes/task")
			}
			if s, ok := sizes[kind]; ok {
				b.ReportMetric(float64(s), "struct-bytes")
			}
		})
	}
}

// BenchmarkIdleGather is BenchmarkIdle for gather: each gatherer takes two
// results that are there and waits for a third, on a oneshot. The
// hand-written future, the generated one, the generated one edited as
// proposed_test.go says, and a goroutine; the same metrics and sizes.
func BenchmarkIdleGather(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 1_000
	}
	sizes := map[string]uintptr{
		"generated": unsafe.Sizeof(gatherAsyncFuture{}),
		"hand":      unsafe.Sizeof(gatherFuture{}),
		"proposed":  unsafe.Sizeof(gatherProposed{}),
	}
	for _, kind := range []string{"hand", "generated", "proposed", "goroutine"} {
		b.Run("impl="+kind, func(b *testing.B) {
			rt := newRuntime(b, blitz.Config{})
			n := n
			if kind == "goroutine" {
				n /= 10
			}
			var m idleMeasure
			for range b.N {
				m = measureIdleGather(b, rt, kind, n)
			}
			b.ReportMetric(m.bytes, "bytes/task")
			b.ReportMetric(m.allocs, "allocs/task")
			if m.rss != 0 {
				b.ReportMetric(m.rss, "rss-bytes/task")
			}
			if s, ok := sizes[kind]; ok {
				b.ReportMetric(float64(s), "struct-bytes")
			}
		})
	}
}

// benchAwaitLoop spawns one task that awaits b.N futures, each ready at its
// second poll, so that ns/op and allocs/op are per await (the spawn and
// join, once per run, are spread over them).
func benchAwaitLoop(b *testing.B, h blitz.Handle, loop func(k int) future.Future[int]) {
	b.ReportAllocs()
	f := loop(b.N)
	b.ResetTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sum, err := blitz.SpawnOn(h, f).Wait(ctx)
	b.StopTimer()
	if want := b.N * (b.N - 1) / 2; err != nil || sum != want {
		b.Fatalf("the loop gave %d, %v; want %d", sum, err, want)
	}
}

// BenchmarkAwait measures one await of a future that is ready at its
// second poll (its first wakes the task, which goes back to the run queue),
// on a runtime with the platform's I/O backend (backend=default) and on one
// without I/O (backend=none): impl=hand is the hand-written loop,
// impl=generated the generated one with a fresh future per await
// (awaitLoop), impl=proposed that generated code edited as proposed_test.go
// says, impl=generatedReused the generated one awaiting one future
// reset before each await (awaitLoopReused); impl=goroutineChan (a receive
// from an unbuffered channel that another goroutine sends into) and
// impl=goroutineGosched (a runtime.Gosched) are the goroutine's
// counterparts. ns/op and allocs/op are per await. Compare the impls with
// benchstat -col /impl.
func BenchmarkAwait(b *testing.B) {
	impls := []struct {
		name string
		loop func(k int) future.Future[int]
	}{
		{"hand", func(k int) future.Future[int] { return newAwaitLoopFuture(k) }},
		{"generated", awaitLoopAsync},
		{"proposed", func(k int) future.Future[int] { return newAwaitLoopProposed(k) }},
		{"generatedReused", func(k int) future.Future[int] { return awaitLoopReusedAsync(new(LaterFuture), k) }},
	}
	for _, cfg := range []struct {
		name    string
		backend string
	}{{"default", blitz.BackendAuto}, {"none", blitz.BackendNone}} {
		b.Run("backend="+cfg.name, func(b *testing.B) {
			rt := newRuntime(b, blitz.Config{Backend: cfg.backend})
			for _, impl := range impls {
				b.Run("impl="+impl.name, func(b *testing.B) { benchAwaitLoop(b, rt.Handle(), impl.loop) })
			}
			// The goroutine's counterparts do not use the runtime; they run
			// beside its idle workers like the tasks do.
			b.Run("impl=goroutineChan", benchGoroutineChan)
			b.Run("impl=goroutineGosched", benchGoroutineGosched)
		})
	}
}

// benchGoroutineChan receives b.N values from an unbuffered channel that
// another goroutine sends into.
func benchGoroutineChan(b *testing.B) {
	b.ReportAllocs()
	ch := make(chan int)
	go func() {
		for i := range b.N {
			ch <- i
		}
	}()
	sum := 0
	for range b.N {
		sum += <-ch
	}
	if want := b.N * (b.N - 1) / 2; sum != want {
		b.Fatalf("received %d, want %d", sum, want)
	}
}

// benchGoroutineGosched yields b.N times.
func benchGoroutineGosched(b *testing.B) {
	b.ReportAllocs()
	sum := 0
	for i := range b.N {
		goruntime.Gosched()
		sum += i
	}
	if want := b.N * (b.N - 1) / 2; sum != want {
		b.Fatalf("summed %d, want %d", sum, want)
	}
}
