package timerwheel_test

import (
	"fmt"
	"time"

	"github.com/blitz-go/blitz/timerwheel"
)

// conn is a caller's struct with an embedded timer entry whose Value points
// back to it.
type conn struct {
	name    string
	timeout timerwheel.Entry[*conn]
}

func newConn(name string) *conn {
	c := &conn{name: name}
	c.timeout.Value = c
	return c
}

// The core wheel counts ticks and reads no clock: the owner decides when time
// moves. Entries embedded in the caller's struct lead back to it via Value.
func ExampleWheel() {
	w := timerwheel.NewWheel[*conn](0)
	a, b, c := newConn("a"), newConn("b"), newConn("c")
	w.Insert(&a.timeout, 10)
	w.Insert(&b.timeout, 5000) // level 2: 5000 ticks away
	w.Insert(&c.timeout, 20)
	fmt.Println("cancel c:", w.Cancel(&c.timeout))

	timedOut := func(e *timerwheel.Entry[*conn]) {
		fmt.Printf("tick %d: %s timed out\n", w.Now(), e.Value.name)
	}
	w.Advance(9, timedOut) // nothing is due yet
	w.Advance(10, timedOut)
	w.Advance(1_000_000, timedOut) // a long jump fires b at its own tick
	fmt.Println("pending:", w.Len())
	// Output:
	// cancel c: true
	// tick 10: a timed out
	// tick 5000: b timed out
	// pending: 0
}

// A driver sleeps until NextExpiry and advances to it. NextExpiry may be a
// lower bound (the start of the slot to cascade), never later than the
// earliest deadline.
func ExampleWheel_NextExpiry() {
	w := timerwheel.NewWheel[string](0)
	for _, d := range []uint64{3, 200, 70} {
		e := &timerwheel.Entry[string]{Value: fmt.Sprint("deadline ", d)}
		w.Insert(e, d)
	}
	for {
		next, ok := w.NextExpiry()
		if !ok {
			break
		}
		w.Advance(next, func(e *timerwheel.Entry[string]) {
			fmt.Printf("woke at %d: %s\n", next, e.Value)
		})
	}
	// Output:
	// woke at 3: deadline 3
	// woke at 70: deadline 70
	// woke at 200: deadline 200
}

// A Timebase turns wall-clock time into ticks: deadlines round up, the
// present rounds down.
func ExampleTimebase() {
	origin := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tb := timerwheel.NewTimebase(origin, 10*time.Millisecond)
	at := origin.Add(25 * time.Millisecond)
	fmt.Println("present tick:", tb.TickAt(at))
	fmt.Println("deadline tick:", tb.DeadlineTick(at))
	fmt.Println("ticks in 1s:", tb.Ticks(time.Second))
	// Output:
	// present tick: 2
	// deadline tick: 3
	// ticks in 1s: 100
}

// Service.AfterFunc works like time.AfterFunc; Close stops the drivers and
// discards timers still pending.
func ExampleService_AfterFunc() {
	svc := timerwheel.NewService()
	defer svc.Close()

	done := make(chan string)
	soon := svc.AfterFunc(5*time.Millisecond, func() { done <- "fired" })
	later := svc.AfterFunc(time.Hour, func() { fmt.Println("never") })
	fmt.Println("stop later:", later.Stop())
	fmt.Println(<-done)
	fmt.Println("stop soon after it fired:", soon.Stop())
	// Output:
	// stop later: true
	// fired
	// stop soon after it fired: false
}
