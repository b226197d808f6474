package future_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// countdown is a future written by hand: a state machine whose state is n.
// Each poll takes one step and, since it can go on at once, wakes its own
// task before returning not-ready, which is what keeps the poll contract.
type countdown struct {
	n int // owned by whoever polls the future
}

func (c *countdown) Poll(cx *future.Context) (string, bool) {
	if c.n == 0 {
		return "liftoff", true
	}
	fmt.Println(c.n)
	c.n--
	cx.Wake(cx.Waker()) // not ready, but able to go on: ask for another poll
	return "", false
}

// A future written by hand, driven to completion from a goroutine by Block.
func Example_writingAFutureByHand() {
	v, err := future.Block(context.Background(), &countdown{n: 3})
	fmt.Println(v, err)
	// Output:
	// 3
	// 2
	// 1
	// liftoff <nil>
}

// Composing futures with Map, Then and JoinAll, without writing a Poll.
func ExampleJoinAll() {
	word := func(s string) future.Future[string] {
		return future.Map(future.Ready(s), strings.ToUpper)
	}
	greeting := future.Then(future.JoinAll(word("hello"), word("futures")),
		func(ws []string) future.Future[string] {
			return future.Ready(strings.Join(ws, ", ") + "!")
		})
	v, _ := future.Block(context.Background(), greeting)
	fmt.Println(v)
	// Output:
	// HELLO, FUTURES!
}

// sleeper stands for a timer: it never completes here, and it shows when
// the race cancels it.
type sleeper struct{ name string }

func (s *sleeper) Poll(*future.Context) (string, bool) { return "", false }

func (s *sleeper) Cancel() { fmt.Println("cancelled", s.name) }

// Race polls every child and cancels the losers in the Poll that finds the
// winner: nothing they registered outlives the race.
func ExampleRace() {
	r := future.Race[string](&sleeper{"slow"}, future.Ready("fast"), &sleeper{"slower"})
	v, _ := future.Block(context.Background(), r)
	fmt.Println("winner:", v)
	// Output:
	// cancelled slow
	// cancelled slower
	// winner: fast
}

// cell is a one-shot value handed from a goroutine to a future: the
// goroutine calls Set, the future's Poll takes the value or registers its
// Waker. Every field is guarded by mu.
type cell struct {
	mu  sync.Mutex
	v   int
	set bool
	wk  waker.Waker
}

func (c *cell) Set(v int) {
	c.mu.Lock()
	c.v, c.set = v, true
	wk := c.wk
	c.mu.Unlock()
	wk.Wake() // outside the lock
}

func (c *cell) Poll(cx *future.Context) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set {
		return c.v, true
	}
	c.wk = cx.Waker()
	return 0, false
}

// Block bridges an ordinary goroutine to a future: it waits for wakes and
// polls again until the future completes, or until ctx is done.
func ExampleBlock() {
	c := &cell{}
	go c.Set(42) // completes the future from another goroutine
	v, err := future.Block(context.Background(), future.Map(c, func(x int) int { return x + 1 }))
	fmt.Println(v, err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = future.Block(ctx, future.Pending[int]())
	fmt.Println(err)
	// Output:
	// 43 <nil>
	// future: block: context canceled
}

// A blocking call of one's own, with a pooled Signal and Context: poll,
// and wait on the Signal between polls (a wake may be spurious, so poll
// again after each), until the future completes.
func ExampleBlocker() {
	c := &cell{}
	go c.Set(7)
	b := future.GetBlocker()
	defer b.Put()
	for {
		if v, ok := c.Poll(b.Context()); ok {
			fmt.Println(v)
			return
		}
		if err := b.Signal().Wait(context.Background()); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output: 7
}
