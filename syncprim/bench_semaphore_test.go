package syncprim

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"golang.org/x/sync/semaphore"
)

// semLoop is a task that acquires and releases one permit of s n times
// through the future tier.
type semLoop struct {
	s       *Semaphore
	n       int
	waiting bool
	f       AcquireFuture
}

// Poll runs iterations until no permit is free or n are done.
func (t *semLoop) Poll(cx *future.Context) (struct{}, bool) {
	for t.n > 0 {
		if !t.waiting {
			t.f = *t.s.Acquire(1)
			t.waiting = true
		}
		if _, ok := t.f.Poll(cx); !ok {
			return struct{}{}, false
		}
		t.waiting = false
		t.s.Release(1)
		t.n--
	}
	return struct{}{}, true
}

// BenchmarkSemaphore: 8 workers share 2 permits; one op is acquire+release.
func BenchmarkSemaphore(b *testing.B) {
	const workers, permits = 8, 2
	b.Run("blitz", func(b *testing.B) {
		sch := newScheduler(b, 2)
		s := NewSemaphore(permits)
		b.ReportAllocs()
		b.ResetTimer()
		hs := make([]scheduler.JoinHandle[struct{}], workers)
		for i := range hs {
			hs[i] = spawnFuture[struct{}](sch, &semLoop{s: s, n: split(b.N, workers, i)})
		}
		waitAll(b, hs...)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		s := NewSemaphore(permits)
		b.ReportAllocs()
		runGoroutines(workers, b.N, func(int) {
			_ = s.AcquireBlocking(context.Background(), 1)
			s.Release(1)
		})
	})
	b.Run("xsyncSemaphore", func(b *testing.B) {
		s := semaphore.NewWeighted(permits)
		b.ReportAllocs()
		runGoroutines(workers, b.N, func(int) {
			_ = s.Acquire(context.Background(), 1)
			s.Release(1)
		})
	})
	b.Run("chanSemaphore", func(b *testing.B) {
		s := make(chan struct{}, permits)
		b.ReportAllocs()
		runGoroutines(workers, b.N, func(int) {
			s <- struct{}{}
			<-s
		})
	})
}
