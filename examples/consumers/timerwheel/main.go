// Command timerwheel uses the timer wheel alone: entries embedded in the caller's structs fire in
// deadline order as the owner advances the wheel.
package main

import (
	"fmt"
	"os"

	"github.com/blitz-go/blitz/timerwheel"
)

type session struct {
	name    string
	timeout timerwheel.Entry[*session]
}

func main() {
	w := timerwheel.NewWheel[*session](0)
	var fired []string
	for i, name := range []string{"c", "a", "b"} {
		s := &session{name: name}
		s.timeout.Value = s
		w.Insert(&s.timeout, uint64(30-10*i)) // c at 30, a at 20, b at 10
	}
	w.Advance(100, func(e *timerwheel.Entry[*session]) { fired = append(fired, e.Value.name) })
	if fmt.Sprint(fired) != "[b a c]" || w.Len() != 0 {
		fmt.Println("unexpected: fired", fired, "pending", w.Len())
		os.Exit(1)
	}
	fmt.Println("ok: timerwheel (fired", fired, "in deadline order)")
}
