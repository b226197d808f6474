package syncprim

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/scheduler"
)

// TestMutexExclusion increments a plain int under the lock from tasks
// (future tier) and goroutines (blocking tier and TryLock) at once: any
// overlap is a data race that -race reports, and a lost update shows in
// the count.
func TestMutexExclusion(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 20_000
	}
	sch := newScheduler(t, 3)
	var m Mutex
	counter := 0
	const tasks, goroutines = 4, 4
	per := n / (tasks + goroutines)
	hs := make([]scheduler.JoinHandle[struct{}], tasks)
	for i := range hs {
		hs[i] = spawnFuture[struct{}](sch, &lockLoop{m: &m, counter: &counter, n: per})
	}
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			for k := range per {
				if i%2 == 0 && k%2 == 0 {
					if g, ok := m.TryLock(); ok {
						counter++
						g.Unlock()
						continue
					}
				}
				g, err := m.LockBlocking(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				counter++
				g.Unlock()
			}
		})
	}
	wg.Wait()
	waitAll(t, hs...)
	if counter != per*(tasks+goroutines) {
		t.Fatalf("counter %d, want %d", counter, per*(tasks+goroutines))
	}
	if m.waiters() != 0 {
		t.Fatalf("waiters %d", m.waiters())
	}
	g, ok := m.TryLock()
	if !ok {
		t.Fatal("mutex left locked")
	}
	g.Unlock()
}
