package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// workers is a set of tasks that keeps one TaskRef per task, at the index
// its tag holds, and counts their outcomes: the Notifier of the tasks it
// spawns.
type workers struct {
	mu       sync.Mutex
	tasks    []scheduler.TaskRef
	sum      int
	failures int
	// done is closed when want tasks ended.
	ended, want int
	done        chan struct{}
}

// spawn starts f and records it, under the lock its TaskEnded takes.
func (w *workers) spawn(s *scheduler.Scheduler, f future.Future[int]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	ref, err := scheduler.SpawnNotifying(s, nil, f, w, uint32(len(w.tasks)))
	if err == nil {
		w.tasks = append(w.tasks, ref)
	}
	return err
}

// TaskEnded counts the outcome and moves the last task into the ended
// one's place, updating its tag.
func (w *workers) TaskEnded(t scheduler.TaskRef, r future.Result[int]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.Err != nil {
		w.failures++
	} else {
		w.sum += r.Value
	}
	i, last := t.Tag(), len(w.tasks)-1
	w.tasks[i] = w.tasks[last]
	w.tasks[i].SetTag(i)
	w.tasks = w.tasks[:last]
	if w.ended++; w.ended == w.want {
		close(w.done)
	}
}

// A set of tasks learns of each one's end from the task itself: no
// JoinHandle per task, no Waker registered on it.
func ExampleSpawnNotifying() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	w := &workers{want: 5, done: make(chan struct{})}
	for i := 1; i <= 4; i++ {
		if err := w.spawn(s, future.Ready(i*10)); err != nil {
			panic(err)
		}
	}
	_ = w.spawn(s, future.PollFn(func(*future.Context) (int, bool) { panic("boom") }))
	select {
	case <-w.done:
	case <-ctx.Done():
		panic("lost")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Println(w.sum, w.failures)
	// Output: 100 1
}
