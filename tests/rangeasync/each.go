// Package rangeasync tests the range over a stream of async functions
// (for v := range future.Each(next)): generated, run on a channel of the
// runtime and on streams whose receives the test controls.
package rangeasync

import (
	"fmt"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

// sum adds the values received from c until it is closed and drained.
//
//blitz:async
func sum(c *channels.Bounded[int]) int {
	total := 0
	for v := range future.Each(c.Recv) {
		total += v
	}
	return total
}

// forms exercises the loop's forms: continue, break, a label, the body
// declaring a variable of the loop variable's name, assignment to an
// existing variable, no variable, and an explicit type argument. Each
// loop reads from c; the last value decides where each stops.
//
//blitz:async
func forms(c *channels.Bounded[int]) []string {
	var seen []string
	for v := range future.Each(c.Recv) { // continue skips, break stops
		if v%2 == 1 {
			continue
		}
		if v < 0 {
			break
		}
		seen = append(seen, fmt.Sprint("even ", v))
	}
outer:
	for v := range future.Each[int](c.Recv) {
		for i := range 3 {
			if v == 100+i {
				continue outer
			}
			if v == 200 {
				break outer
			}
		}
		v := v * 10 // the body may declare the loop variable's name
		seen = append(seen, fmt.Sprint("labeled ", v))
	}
	var last int
	for last = range future.Each(c.Recv) { // an existing variable
		if last == 0 {
			break
		}
	}
	seen = append(seen, fmt.Sprint("last ", last))
	n := 0
	for range future.Each(c.Recv) {
		n++
	}
	return append(seen, fmt.Sprint("rest ", n))
}

// lastOf ranges over the receives of c into an existing variable until c
// is closed: as with Go's range, the end leaves the variable at the last
// value received (start if none was).
//
//blitz:async
func lastOf(c *channels.Bounded[int], start int) int {
	last := start
	for last = range future.Each(c.Recv) {
	}
	return last
}

// reassigned ranges over the receives of c while the body reassigns c:
// as in Go, the method value is evaluated once, so the loop goes on
// receiving from the first channel.
//
//blitz:async
func reassigned(c, other *channels.Bounded[int]) []int {
	var got []int
	for v := range future.Each(c.Recv) {
		got = append(got, v)
		c = other
	}
	_ = c
	return got
}

// spanning ranges over a stream written over several lines, with the
// receive in a function literal: it is evaluated once.
//
//blitz:async
func spanning(c *channels.Bounded[int], made *int) []int {
	var got []int
	for v := range future.Each(func() func() *channels.RecvFuture[int] {
		*made++
		return c.Recv
	}()) {
		got = append(got, v)
	}
	return got
}

// nested ranges over the pairs of two channels, the inner loop drained
// for each value of the outer one.
//
//blitz:async
func nested(outer *channels.Bounded[int], inner func(int) *channels.Bounded[string]) []string {
	var got []string
	for o := range future.Each(outer.Recv) {
		for s := range future.Each(inner(o).Recv) {
			got = append(got, fmt.Sprint(o, s))
		}
	}
	return got
}

// workers is the worker pool's shape: n async literals each range over
// the jobs channel; it returns how many jobs each took and their sum.
//
//blitz:async
func workers(jobs *channels.Bounded[int], n int) (int, error) {
	var set blitz.JoinSet[int]
	defer set.Close()
	for range n {
		set.Spawn(future.Cx(), future.Async(func() int {
			s := 0
			for j := range future.Each(jobs.Recv) {
				s += j
			}
			return s
		}))
	}
	each, err := future.Try(set.Values())
	if err != nil {
		return 0, err
	}
	total := 0
	for _, s := range each {
		total += s
	}
	return total, nil
}

// counter is a stream of its own: a method with a pointer receiver
// returning a fallible future; it fails after limit values.
type counter struct{ n, limit int }

func (c *counter) next() future.Future[future.Result[int]] {
	c.n++
	if c.n > c.limit {
		return future.Ready(future.Result[int]{Err: fmt.Errorf("counter: past %d", c.limit)})
	}
	return future.Ready(future.Result[int]{Value: c.n})
}

// count ranges over a counter's values until its first error.
//
//blitz:async
func count(limit int) []int {
	c := &counter{limit: limit}
	var got []int
	for v := range future.Each(c.next) {
		got = append(got, v)
	}
	return got
}
