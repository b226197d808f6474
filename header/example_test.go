package header_test

import (
	"fmt"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
)

// queue is a tiny run queue: a slice, one goroutine.
type queue struct{ hs []*header.Header }

func (q *queue) Schedule(h *header.Header) {
	fmt.Println("  schedule: pushed")
	q.hs = append(q.hs, h)
}

// chatty is a task that needs two events. On its first poll a wake arrives
// while it is still running, as a waker on another goroutine could do.
type chatty struct {
	h      header.Header
	q      *queue // where a wake sends the task
	events int
	polls  int
}

func (c *chatty) Poll(cx *future.Context) bool {
	c.polls++
	fmt.Printf("  poll %d: %d event(s)\n", c.polls, c.events)
	if c.polls == 1 {
		c.events++ // an event is published during the poll...
		fmt.Println("  wake during poll:", c.h.Load())
		cx.Waker().Wake() // ...and its waker fires: only the notified bit is set
		fmt.Println("  after the wake:  ", c.h.Load())
	}
	return c.events >= 1 && c.polls > 1
}

func (c *chatty) Abort(error) {}

func (c *chatty) Scheduler() header.Scheduler { return c.q }

// The wake-during-poll protocol ("The notified bit"): a wake that lands while
// the task runs sets the notified bit instead of queueing it a second time,
// and TransitionToIdle turns that bit into a reschedule.
func Example_wakeDuringPoll() {
	q := &queue{}
	t := &chatty{q: q}
	t.h.Init(t, true)
	t.h.Wake() // spawn: Idle -> Scheduled, pushed once
	for len(q.hs) > 0 {
		h := q.hs[0]
		q.hs = q.hs[1:]
		fmt.Println("run:", h.TransitionToRunning() == header.RunPoll)
		if h.Task().Poll(future.NewContext(h.Waker())) {
			before := h.TransitionToComplete()
			fmt.Println("complete, join interest:", before.JoinInterest())
			continue
		}
		if h.TransitionToIdle() == header.IdleReschedule {
			fmt.Println("idle: notified during the poll, reschedule")
			q.Schedule(h)
		}
	}
	fmt.Println(t.h.Load())
	// Output:
	//   schedule: pushed
	// run: true
	//   poll 1: 0 event(s)
	//   wake during poll: running|join shield=0 ref=2
	//   after the wake:   running|notified|join shield=0 ref=2
	// idle: notified during the poll, reschedule
	//   schedule: pushed
	// run: true
	//   poll 2: 1 event(s)
	// complete, join interest: true
	// complete|join shield=0 ref=2
}
