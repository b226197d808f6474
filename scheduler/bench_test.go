package scheduler_test

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// chainSpawns are the ways BenchmarkChainedSpawnOneWorker spawns a chain's
// next link from inside a task, by name; bench_value_test.go adds to them.
var chainSpawns = []struct {
	name  string
	spawn func(s *scheduler.Scheduler, cx *future.Context, c benchLink)
}{
	{"iface", func(s *scheduler.Scheduler, cx *future.Context, c benchLink) {
		scheduler.Spawn[struct{}](s, cx, &c)
	}},
}

// benchLink is one link of a chain: it spawns the next one (how, kind
// says), the last closes done.
type benchLink struct {
	left int
	kind int
	s    *scheduler.Scheduler
	done chan struct{}
}

func (c *benchLink) Poll(cx *future.Context) (struct{}, bool) {
	if c.left == 0 {
		close(c.done)
		return struct{}{}, true
	}
	chainSpawns[c.kind].spawn(c.s, cx, benchLink{left: c.left - 1, kind: c.kind, s: c.s, done: c.done})
	return struct{}{}, true
}

// BenchmarkChainedSpawnOneWorker runs a chain of 1,000 spawns per op on a
// scheduler of one worker and no driver: the per-task cost of spawn, poll
// and finish without stealing, parking or I/O (ns/spawn), for each way of
// spawning, and the goroutine equivalent.
func BenchmarkChainedSpawnOneWorker(b *testing.B) {
	const depth = 1000
	for kind, sp := range chainSpawns {
		b.Run(sp.name, func(b *testing.B) {
			s, err := scheduler.New(scheduler.Config{Workers: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Shutdown(context.Background())
			b.ReportAllocs()
			for range b.N {
				done := make(chan struct{})
				scheduler.Spawn[struct{}](s, nil, &benchLink{left: depth, kind: kind, s: s, done: done})
				<-done
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/spawn")
		})
	}
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		var link func(int, chan struct{})
		link = func(n int, done chan struct{}) {
			if n == 0 {
				close(done)
				return
			}
			go link(n-1, done)
		}
		for range b.N {
			done := make(chan struct{})
			go link(depth, done)
			<-done
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/spawn")
	})
}

// BenchmarkOnWorker is the check every blocking call (JoinHandle.Wait,
// BlockOn) makes before it parks, from a goroutine that is not a worker
// while a scheduler runs: a walk of the caller's stack.
func BenchmarkOnWorker(b *testing.B) {
	s, err := scheduler.New(scheduler.Config{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	for b.Loop() {
		if scheduler.OnWorker() {
			b.Fatal("a benchmark's goroutine is not a worker")
		}
	}
}
