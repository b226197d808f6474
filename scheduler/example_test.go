package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// Spawning from outside the scheduler and waiting for the result from a
// goroutine.
func Example() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	// Bound every wait: a lost wakeup then fails instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	h := scheduler.Spawn(s, nil, future.Map(future.Ready(20), func(v int) int { return v + 22 }))
	v, err := h.Wait(ctx)
	fmt.Println(v, err)
	// Output: 42 <nil>
}

// A task spawns children from inside its poll (passing its Context, so
// they run next on the same worker) and awaits their JoinHandles, which are
// futures of the children's outcomes.
func ExampleSpawn_fromTask() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	// Bound every wait: a lost wakeup then fails instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	var all future.Future[[]future.Result[int]]
	parent := future.PollFn(func(cx *future.Context) (int, bool) {
		if all == nil {
			var hs []future.Future[future.Result[int]]
			for i := 1; i <= 3; i++ {
				hs = append(hs, scheduler.Spawn(s, cx, future.Ready(i*i)))
			}
			all = future.JoinAll(hs...)
		}
		rs, ok := all.Poll(cx)
		if !ok {
			return 0, false
		}
		sum := 0
		for _, r := range rs {
			sum += r.Value
		}
		return sum, true
	})
	v, err := scheduler.Spawn(s, nil, parent).Wait(ctx)
	fmt.Println(v, err)
	// Output: 14 <nil>
}

// Yield gives the worker to the other tasks: the task goes to the back of
// its worker's queue and is polled again later.
func ExampleYield() {
	s, err := scheduler.New(scheduler.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	// Bound every wait: a lost wakeup then fails instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	var y scheduler.YieldFuture
	polls, yields := 0, 0
	h := scheduler.Spawn(s, nil, future.PollFn(func(cx *future.Context) (string, bool) {
		polls++
		for yields < 3 {
			if _, ok := y.Poll(cx); !ok {
				return "", false
			}
			y.Reset()
			yields++
		}
		return fmt.Sprintf("%d yields in %d polls", yields, polls), true
	}))
	v, _ := h.Wait(ctx)
	fmt.Println(v)
	// Output: 3 yields in 4 polls
}

// Cancel stops a task that has not completed: its future is cancelled and
// the handle reports ErrCancelled.
func ExampleJoinHandle_Cancel() {
	s, err := scheduler.New(scheduler.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	// Bound every wait: a lost wakeup then fails instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	h := scheduler.Spawn(s, nil, future.Pending[int]()) // never completes
	h.Cancel()
	_, err = h.Wait(ctx)
	fmt.Println(errors.Is(err, scheduler.ErrCancelled))
	// Output: true
}

// TrySpawn refuses work beyond Config.MaxLiveTasks instead of queueing it.
func ExampleTrySpawn() {
	s, err := scheduler.New(scheduler.Config{Workers: 1, MaxLiveTasks: 1})
	if err != nil {
		panic(err)
	}
	// Bound every wait: a lost wakeup then fails instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	h, err := scheduler.TrySpawn(s, nil, future.Pending[int]())
	fmt.Println(err)
	_, err = scheduler.TrySpawn(s, nil, future.Ready(1))
	fmt.Println(errors.Is(err, scheduler.ErrBackpressure))
	h.Cancel()
	_, _ = h.Wait(ctx)
	_, err = scheduler.TrySpawn(s, nil, future.Ready(1))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// <nil>
}

// A task that does 300 steps of work, awaiting future.ConsumeBudget after
// each, returns to its worker whenever it has spent its budget of
// future.TaskBudget operations: it is polled 3 times. Under
// future.Unconstrained the same loop runs in one poll.
func Example_budget() {
	s, err := scheduler.New(scheduler.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	steps := func() future.Future[int] {
		polls, done := 0, 0
		var step future.Future[struct{}]
		return future.PollFn(func(cx *future.Context) (int, bool) {
			polls++
			for done < 300 {
				if step == nil {
					step = future.ConsumeBudget()
				}
				if _, ok := step.Poll(cx); !ok {
					return 0, false // budget spent: the task was woken as a yield
				}
				step = nil
				done++ // a step of work
			}
			return polls, true
		})
	}
	polls, _ := scheduler.Spawn(s, nil, steps()).Wait(ctx)
	fmt.Println("polls:", polls)
	polls, _ = scheduler.Spawn(s, nil, future.Unconstrained(steps())).Wait(ctx)
	fmt.Println("unconstrained polls:", polls)
	// Output:
	// polls: 3
	// unconstrained polls: 1
}
