// Package selectasync tests the select over futures of async functions:
// generated, run on futures whose readiness the test controls (Probe) and
// on the runtime (an Interval, a channel, a stop).
package selectasync

//lint:file-ignore S1000 forms exercises selects of one case on purpose: each case form the generator takes
//lint:file-ignore S1005 forms exercises a case that receives into the blank identifier on purpose

import (
	"fmt"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

// ticker is the shape a select serves: in a loop, a tick, a message or a
// stop. The interval and the stop live across iterations (OnKeep); each
// receive is made for its select and cancelled when it loses (On). It
// returns what it saw, in order.
//
//blitz:async
func ticker(iv *blitz.Interval, msgs *channels.Bounded[string], stop future.Future[struct{}]) ([]string, error) {
	var seen []string
	ticks := 0
	for {
		select {
		case <-future.OnKeep(iv):
			ticks++
			seen = append(seen, fmt.Sprintf("tick %d", ticks))
		case m := <-future.On(msgs.Recv()):
			if m.Err != nil {
				return seen, m.Err
			}
			seen = append(seen, "msg "+m.Value)
		case <-future.OnKeep(stop):
			return seen, nil
		}
	}
}

// pick returns the value of whichever of a and b completes first, and
// which: the select owns both.
//
//blitz:async
func pick(a, b future.Future[int]) string {
	select {
	case v := <-future.On(a):
		return fmt.Sprint("a ", v)
	case v := <-future.On(b):
		return fmt.Sprint("b ", v)
	}
}

// keepLoop waits n times for a fresh future of next or for kept, which the
// select does not own: while next wins, kept stays pending; once kept
// wins, the loop ends. It returns the values, kept's last.
//
//blitz:async
func keepLoop(kept future.Future[int], next func() future.Future[int], n int) []int {
	var got []int
	for range n {
		select {
		case v := <-future.On(next()):
			got = append(got, v)
		case v := <-future.OnKeep(kept):
			return append(got, v)
		}
	}
	return got
}

// orDefault returns f's value if f is ready at once, or -1.
//
//blitz:async
func orDefault(f future.Future[int]) int {
	select {
	case v := <-future.On(f):
		return v
	default:
		return -1
	}
}

// fairness runs n selects over two futures that are always ready and
// returns which case each took.
//
//blitz:async
func fairness(a, b func() future.Future[int], n int) []int {
	var got []int
	for range n {
		select {
		case v := <-future.On(a()):
			got = append(got, v)
		case v := <-future.On(b()):
			got = append(got, v)
		}
	}
	return got
}

// forms uses every form of a case: assignment to an existing variable and
// to a field, a discarded value, no value, a case that breaks out of the
// select, a labeled select left with break, continue in a case, an await in
// a case and a select nested in a case. Each step is noted in the log.
//
//blitz:async
func forms(f func(int) future.Future[int], log *[]string) int {
	var x int
	var s struct{ v int }
	for i := 0; i < 6; i++ {
		switch i {
		case 0:
			select {
			case x = <-future.On(f(10)):
			}
			*log = append(*log, fmt.Sprint("assigned ", x))
		case 1:
			select {
			case s.v = <-future.On(f(11)):
				*log = append(*log, fmt.Sprint("field ", s.v))
			}
		case 2:
			select {
			case _ = <-future.On(f(12)):
				*log = append(*log, "discarded")
			}
			select {
			case <-future.On(f(13)):
				*log = append(*log, "no value")
				break
			}
		case 3:
		out:
			select {
			case v := <-future.On(f(14)):
				if v > 0 {
					break out
				}
				*log = append(*log, "not reached")
			}
			*log = append(*log, "left the labeled select")
		case 4:
			select {
			case v := <-future.On(f(15)):
				w := future.Await(f(v + 1))
				*log = append(*log, fmt.Sprint("awaited in a case ", w))
				continue
			}
		case 5:
			select {
			case v := <-future.On(f(20)):
				select {
				case w := <-future.On(f(v + 1)):
					*log = append(*log, fmt.Sprint("nested ", v, " ", w))
				}
			}
		}
		*log = append(*log, fmt.Sprint("end of step ", i))
	}
	return x + s.v
}

// drain receives n values from whichever of a and b has one, with a select
// over futures, and returns their sum: the benchmark's loop.
//
//blitz:async
func drain(a, b *channels.Bounded[int], n int) int {
	sum := 0
	for range n {
		select {
		case r := <-future.On(a.Recv()):
			sum += r.Value
		case r := <-future.On(b.Recv()):
			sum += r.Value
		}
	}
	return sum
}
