package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// countdown is a hand-written future: a state machine that sleeps between
// steps. Its state (the steps left and the current sleep) lives in the
// struct, and the sleep is embedded, so the whole task is one allocation.
type countdown struct {
	left  int
	sleep blitz.SleepFuture
	armed bool
	out   []int
}

func (c *countdown) Poll(cx *future.Context) ([]int, bool) {
	for c.left > 0 {
		if !c.armed {
			c.sleep.ResetAfter(time.Millisecond)
			c.armed = true
		}
		if _, ok := c.sleep.Poll(cx); !ok {
			return nil, false // the sleep registered cx's Waker
		}
		c.armed = false
		c.out = append(c.out, c.left)
		c.left--
	}
	return c.out, true
}

// Cancel removes the pending sleep: the task may be cancelled mid-count.
func (c *countdown) Cancel() { c.sleep.Cancel() }

// Writing a future by hand as a small state machine.
func Example_stateMachine() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	h := blitz.SpawnOn(rt.Handle(), future.Future[[]int](&countdown{left: 3}))
	steps, err := h.Wait(context.Background())
	fmt.Println(steps, err)
	// Output: [3 2 1] <nil>
}

// Building a task from combinators without writing Poll: two sleeps run
// concurrently under JoinAll, then Map shapes the result.
func Example_combinators() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	sleepThen := func(d time.Duration, v string) future.Future[string] {
		return future.Map((blitz.Sleep(d)), func(struct{}) string { return v })
	}
	both := future.Map(future.JoinAll(sleepThen(2*time.Millisecond, "a"), sleepThen(time.Millisecond, "b")),
		func(vs []string) string { return vs[0] + vs[1] })

	v, err := blitz.SpawnOn(rt.Handle(), both).Wait(context.Background())
	fmt.Println(v, err)
	// Output: ab <nil>
}

// A timeout around anything: here a future that never completes.
func Example_timeout() {
	rt, _ := blitz.New(blitz.Config{Workers: 1})
	defer rt.Shutdown(context.Background())

	r, err := blitz.BlockOn(context.Background(), rt.Handle(),
		(blitz.Timeout(5*time.Millisecond, future.Pending[int]())))
	fmt.Println(errors.Is(r.Err, blitz.ErrTimeout), err)
	// Output: true <nil>
}

// Calling task code from a goroutine: BlockOn polls a future on the calling
// goroutine, and a JoinHandle's Wait blocks until a spawned task finishes.
func ExampleBlockOn() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	h := blitz.SpawnOn(rt.Handle(), future.Ready(40))
	v, err := blitz.BlockOn(context.Background(), rt.Handle(),
		future.Map(h.Future(), func(r future.Result[int]) int { return r.Value + 2 }))
	fmt.Println(v, err)
	// Output: 42 <nil>
}

// goResult runs blocking code on a goroutine and completes with its result:
// the pattern for calling goroutine code from a task until the blocking pool
// exists. The goroutine stores the result and wakes the task.
type goResult[T any] struct {
	fn      func() T
	started bool
	done    chan T // buffered: the goroutine never blocks on it
}

func (g *goResult[T]) Poll(cx *future.Context) (T, bool) {
	if !g.started {
		g.started = true
		g.done = make(chan T, 1)
		wk := cx.Waker()
		go func() {
			g.done <- g.fn()
			wk.Wake()
		}()
	}
	select {
	case v := <-g.done:
		return v, true
	default:
		var zero T
		return zero, false
	}
}

// Calling goroutine code from a task without blocking the worker.
func Example_goroutineFromTask() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	blocking := func() string { time.Sleep(2 * time.Millisecond); return "done on a goroutine" }
	v, err := blitz.SpawnOn(rt.Handle(), future.Future[string](&goResult[string]{fn: blocking})).Wait(context.Background())
	fmt.Println(v, err)
	// Output: done on a goroutine <nil>
}

// Spawning from inside a task: the child goes to the spawning worker's LIFO
// slot and the parent awaits its JoinHandle.
func ExampleSpawn() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	var child blitz.JoinHandle[int]
	parent := future.PollFn(func(cx *future.Context) (int, bool) {
		if child == (blitz.JoinHandle[int]{}) {
			child = blitz.Spawn(cx, future.Ready(21))
		}
		r, ok := child.Poll(cx)
		return r.Value * 2, ok
	})
	v, err := blitz.SpawnOn(rt.Handle(), parent).Wait(context.Background())
	fmt.Println(v, err)
	// Output: 42 <nil>
}

// An Interval that skips missed ticks.
func ExampleNewInterval() {
	rt, _ := blitz.New(blitz.Config{Workers: 1})
	defer rt.Shutdown(context.Background())

	iv, _ := blitz.NewInterval(time.Millisecond, blitz.Skip)
	n := 0
	_, err := blitz.BlockOn(context.Background(), rt.Handle(), future.PollFn(func(cx *future.Context) (int, bool) {
		for n < 3 {
			if _, ok := iv.Poll(cx); !ok {
				return 0, false
			}
			n++
		}
		iv.Cancel()
		return n, true
	}))
	fmt.Println(n, err)
	// Output: 3 <nil>
}
