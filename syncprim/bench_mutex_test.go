package syncprim

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// lockLoop is a task that locks m, increments *counter and unlocks, n
// times, through the future tier; the LockFuture lives in the task's state.
type lockLoop struct {
	m       *Mutex
	counter *int
	n       int
	waiting bool
	f       LockFuture
}

// Poll runs iterations until the lock is not free or n are done.
func (t *lockLoop) Poll(cx *future.Context) (struct{}, bool) {
	for t.n > 0 {
		if !t.waiting {
			t.f = *t.m.Lock()
			t.waiting = true
		}
		g, ok := t.f.Poll(cx)
		if !ok {
			return struct{}{}, false
		}
		t.waiting = false
		*t.counter++
		g.Unlock()
		t.n--
	}
	return struct{}{}, true
}

// split divides n ops among w workers.
func split(n, w, i int) int {
	q := n / w
	if i < n%w {
		q++
	}
	return q
}

// BenchmarkMutex: one op is one lock+unlock around a counter increment.
func BenchmarkMutex(b *testing.B) {
	b.Run("uncontended/blitz", func(b *testing.B) {
		var m Mutex
		counter := 0
		cx := future.NewContext(waker.Noop())
		h := &struct{ f LockFuture }{}
		b.ReportAllocs()
		for b.Loop() {
			h.f = *m.Lock()
			g, _ := h.f.Poll(cx)
			counter++
			g.Unlock()
		}
	})
	b.Run("uncontended/blitzBlocking", func(b *testing.B) {
		var m Mutex
		counter := 0
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			g, _ := m.LockBlocking(ctx)
			counter++
			g.Unlock()
		}
	})
	b.Run("uncontended/syncMutex", func(b *testing.B) {
		var m sync.Mutex
		counter := 0
		b.ReportAllocs()
		for b.Loop() {
			m.Lock()
			counter++
			m.Unlock()
		}
	})
	const workers = 4
	b.Run("contended4/blitz", func(b *testing.B) {
		s := newScheduler(b, 2)
		var m Mutex
		counter := 0
		b.ReportAllocs()
		b.ResetTimer()
		hs := make([]scheduler.JoinHandle[struct{}], workers)
		for i := range hs {
			hs[i] = spawnFuture[struct{}](s, &lockLoop{m: &m, counter: &counter, n: split(b.N, workers, i)})
		}
		waitAll(b, hs...)
		b.StopTimer()
		if counter != b.N {
			b.Fatalf("counter %d, want %d", counter, b.N)
		}
	})
	b.Run("contended4/blitzBlocking", func(b *testing.B) {
		var m Mutex
		counter := 0
		b.ReportAllocs()
		runGoroutines(workers, b.N, func(int) {
			g, _ := m.LockBlocking(context.Background())
			counter++
			g.Unlock()
		})
		if counter != b.N {
			b.Fatalf("counter %d, want %d", counter, b.N)
		}
	})
	b.Run("contended4/syncMutex", func(b *testing.B) {
		var m sync.Mutex
		counter := 0
		b.ReportAllocs()
		runGoroutines(workers, b.N, func(int) {
			m.Lock()
			counter++
			m.Unlock()
		})
	})
}

// runGoroutines runs n calls of op split across w goroutines and waits.
func runGoroutines(w, n int, op func(worker int)) {
	var wg sync.WaitGroup
	for i := range w {
		k := split(n, w, i)
		wg.Go(func() {
			for range k {
				op(i)
			}
		})
	}
	wg.Wait()
}
