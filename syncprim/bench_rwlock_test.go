package syncprim

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// rwLoop is a task that read-locks (or write-locks) l n times through the
// future tier, reading (or incrementing) *counter inside.
type rwLoop struct {
	l       *RwLock
	counter *int
	sink    int
	n       int
	write   bool
	waiting bool
	rf      RLockFuture
	wf      WLockFuture
}

// Poll runs iterations until the lock is not free or n are done.
func (t *rwLoop) Poll(cx *future.Context) (struct{}, bool) {
	for t.n > 0 {
		if t.write {
			if !t.waiting {
				t.wf = *t.l.Lock()
				t.waiting = true
			}
			g, ok := t.wf.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			*t.counter++
			g.Unlock()
		} else {
			if !t.waiting {
				t.rf = *t.l.RLock()
				t.waiting = true
			}
			g, ok := t.rf.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			t.sink += *t.counter
			g.Unlock()
		}
		t.waiting = false
		t.n--
	}
	return struct{}{}, true
}

// BenchmarkRwLock: 4 readers and 2 writers; one op is one lock+unlock.
func BenchmarkRwLock(b *testing.B) {
	const readers, writers = 4, 2
	const workers = readers + writers
	b.Run("blitz", func(b *testing.B) {
		s := newScheduler(b, 2)
		var l RwLock
		counter := 0
		b.ReportAllocs()
		b.ResetTimer()
		hs := make([]scheduler.JoinHandle[struct{}], workers)
		for i := range hs {
			hs[i] = spawnFuture[struct{}](s, &rwLoop{l: &l, counter: &counter, n: split(b.N, workers, i), write: i >= readers})
		}
		waitAll(b, hs...)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		var l RwLock
		counter := 0
		sinks := make([]int, workers)
		b.ReportAllocs()
		runGoroutines(workers, b.N, func(i int) {
			if i >= readers {
				g, _ := l.LockBlocking(context.Background())
				counter++
				g.Unlock()
				return
			}
			g, _ := l.RLockBlocking(context.Background())
			sinks[i] += counter
			g.Unlock()
		})
	})
	b.Run("syncRWMutex", func(b *testing.B) {
		var l sync.RWMutex
		counter := 0
		sinks := make([]int, workers)
		b.ReportAllocs()
		runGoroutines(workers, b.N, func(i int) {
			if i >= readers {
				l.Lock()
				counter++
				l.Unlock()
				return
			}
			l.RLock()
			sinks[i] += counter
			l.RUnlock()
		})
	})
}
