package timerwheel_test

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz/timerwheel"
)

// benchTimers is how many timers the single-goroutine benchmarks keep live
// at once.
const benchTimers = 1_000_000

// benchDurations returns benchTimers distinct durations between 1 s and
// 100 s in a fixed random order.
var benchDurations = sync.OnceValue(func() []time.Duration {
	ds := make([]time.Duration, benchTimers)
	step := 99 * time.Second / benchTimers
	for i := range ds {
		ds[i] = time.Second + time.Duration(i)*step
	}
	r := rand.New(rand.NewPCG(1, 1))
	r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	return ds
})

// benchTicks returns benchDurations in ticks of DefaultTick.
var benchTicks = sync.OnceValue(func() []uint64 {
	tb := timerwheel.NewTimebase(time.Now(), timerwheel.DefaultTick)
	ts := make([]uint64, benchTimers)
	for i, d := range benchDurations() {
		ts[i] = tb.Ticks(d)
	}
	return ts
})

// benchConn is a caller's struct with an embedded entry.
type benchConn struct {
	id      int
	timeout timerwheel.Entry[*benchConn]
}

func noop() {}

// batches calls run with batch sizes that add up to b.N, none larger than
// benchTimers.
func batches(b *testing.B, run func(n int)) {
	for done := 0; done < b.N; {
		n := min(benchTimers, b.N-done)
		run(n)
		done += n
	}
}

// BenchmarkInsertCancel starts up to a million timers with distinct
// deadlines between 1 s and 100 s, then stops them all; ns/op is per timer.
func BenchmarkInsertCancel(b *testing.B) {
	b.Run("timerwheel", func(b *testing.B) {
		ticks := benchTicks()
		conns := make([]benchConn, benchTimers)
		for i := range conns {
			conns[i].id = i
			conns[i].timeout.Value = &conns[i]
		}
		w := timerwheel.NewWheel[*benchConn](0)
		b.ReportAllocs()
		b.ResetTimer()
		batches(b, func(n int) {
			for i := range n {
				w.Insert(&conns[i].timeout, ticks[i])
			}
			for i := range n {
				w.Cancel(&conns[i].timeout)
			}
		})
	})
	b.Run("timerwheelAfterFunc", func(b *testing.B) {
		ds := benchDurations()
		svc := timerwheel.NewService()
		defer svc.Close()
		timers := make([]*timerwheel.Timer, benchTimers)
		b.ReportAllocs()
		b.ResetTimer()
		batches(b, func(n int) {
			for i := range n {
				timers[i] = svc.AfterFunc(ds[i], noop)
			}
			for i := range n {
				timers[i].Stop()
			}
		})
	})
	b.Run("timeAfterFunc", func(b *testing.B) {
		ds := benchDurations()
		timers := make([]*time.Timer, benchTimers)
		b.ReportAllocs()
		b.ResetTimer()
		batches(b, func(n int) {
			for i := range n {
				timers[i] = time.AfterFunc(ds[i], noop)
			}
			for i := range n {
				timers[i].Stop()
			}
		})
	})
}

// heapTimer and timerHeap are the baseline of BenchmarkAdvance: a
// container/heap min-heap ordered by deadline, as Go's runtime timers are.
type heapTimer struct {
	deadline uint64
	index    int
}

type timerHeap []*heapTimer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*heapTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// BenchmarkAdvance fires up to a million timers with deadlines between 1 s
// and 100 s the way a driver does, waking at each next expiry and firing
// everything due; ns/op is per fired timer. Inserting is not timed.
func BenchmarkAdvance(b *testing.B) {
	b.Run("timerwheel", func(b *testing.B) {
		ticks := benchTicks()
		conns := make([]benchConn, benchTimers)
		for i := range conns {
			conns[i].timeout.Value = &conns[i]
		}
		fired := 0
		fire := func(e *timerwheel.Entry[*benchConn]) {
			if e.Value != nil { // reach the caller's struct, as a real callback would
				fired++
			}
		}
		w := timerwheel.NewWheel[*benchConn](0)
		b.ReportAllocs()
		b.ResetTimer()
		batches(b, func(n int) {
			b.StopTimer()
			base := w.Now()
			for i := range n {
				w.Insert(&conns[i].timeout, base+ticks[i])
			}
			b.StartTimer()
			for {
				next, ok := w.NextExpiry()
				if !ok {
					break
				}
				w.Advance(next, fire)
			}
		})
		if fired != b.N {
			b.Fatalf("fired %d of %d", fired, b.N)
		}
	})
	b.Run("heap", func(b *testing.B) {
		ticks := benchTicks()
		timers := make([]heapTimer, benchTimers)
		h := make(timerHeap, 0, benchTimers)
		fired := 0
		now := uint64(0)
		b.ReportAllocs()
		b.ResetTimer()
		batches(b, func(n int) {
			b.StopTimer()
			for i := range n {
				timers[i].deadline = now + ticks[i]
				heap.Push(&h, &timers[i])
			}
			b.StartTimer()
			for h.Len() > 0 {
				now = h[0].deadline
				for h.Len() > 0 && h[0].deadline <= now {
					heap.Pop(&h)
					fired++
				}
			}
		})
		if fired != b.N {
			b.Fatalf("fired %d of %d", fired, b.N)
		}
	})
}

// concurrentGoroutines is how many goroutines BenchmarkConcurrentAfterFunc
// runs, whatever GOMAXPROCS is.
const concurrentGoroutines = 4

// concurrentWindow is how many timers each goroutine keeps live: it stops
// the timer it started concurrentWindow timers ago before starting the next.
const concurrentWindow = 1024

// runConcurrent splits b.N AfterFunc+Stop pairs over concurrentGoroutines
// goroutines.
func runConcurrent[T interface{ Stop() bool }](b *testing.B, afterFunc func(time.Duration, func()) T) {
	ds := benchDurations()
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range concurrentGoroutines {
		n := b.N / concurrentGoroutines
		if g < b.N%concurrentGoroutines {
			n++
		}
		wg.Go(func() {
			var ring [concurrentWindow]T
			var live [concurrentWindow]bool
			for i := range n {
				k := i % concurrentWindow
				if live[k] {
					ring[k].Stop()
				}
				ring[k] = afterFunc(ds[(g*n+i)%benchTimers], noop)
				live[k] = true
			}
			for k := range ring {
				if live[k] {
					ring[k].Stop()
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkConcurrentAfterFunc starts and stops timers from four goroutines
// at once, each keeping a window of 1024 live; ns/op is per timer.
func BenchmarkConcurrentAfterFunc(b *testing.B) {
	b.Run("timerwheel", func(b *testing.B) {
		svc := timerwheel.NewService()
		defer svc.Close()
		runConcurrent(b, svc.AfterFunc)
	})
	b.Run("timeAfterFunc", func(b *testing.B) {
		runConcurrent(b, time.AfterFunc)
	})
}

// BenchmarkConcurrentAfterFuncShards is BenchmarkConcurrentAfterFunc's
// timerwheel case with a given number of shards: "Sharding" in the package
// doc records its figures.
func BenchmarkConcurrentAfterFuncShards(b *testing.B) {
	for _, shards := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			svc := timerwheel.NewService(timerwheel.WithShards(shards))
			defer svc.Close()
			runConcurrent(b, svc.AfterFunc)
		})
	}
}
