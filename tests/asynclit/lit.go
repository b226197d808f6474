// Package asynclit tests async function literals (future.Async and its
// kin) through the code blitzgen generates for them.
package asynclit

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"errors"
	"fmt"
	"strings"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// shared: a literal and its enclosing function share the variables the
// literal captures, both ways, across awaits on either side.
//
//blitz:async
func shared(g1, g2 future.Future[int]) (string, error) {
	x := 1
	inner := future.Async(func() int {
		x += 10 // seen by shared
		v := future.Await(g1)
		x += v // seen by shared after its await
		return x
	})
	x = 2 // seen by the literal, which has not run yet
	got := future.Await(inner)
	var w int
	var err error
	future.Await(future.AsyncDo(func() {
		w, err = future.Try(future.Map(g2, future.Ok[int])) // assigns the captured w and err
	}))
	return fmt.Sprintf("got %d x %d w %d", got, x, w), err
}

// perIteration: each iteration's literal captures that iteration's
// variable, as Go's closures do since Go 1.22, even when the loop awaits.
//
//blitz:async
func perIteration(n int, tick func() future.Future[int]) []int {
	var fs []future.Future[int]
	for i := range n {
		k := i * 10
		fs = append(fs, future.Async(func() int {
			future.Await(tick())
			return k + i
		}))
		future.Await(tick())
	}
	var out []int
	for _, f := range fs {
		out = append(out, future.Await(f))
	}
	return out
}

// fallible: AsyncFallible's literal returns (T, error), unpacked by Try;
// AsyncDo's returns nothing.
//
//blitz:async
func fallible(fail bool, g future.Future[int]) (int, error) {
	var log []string
	done := future.AsyncDo(func() {
		log = append(log, "do")
	})
	future.Await(done)
	v, err := future.Try(future.AsyncFallible(func() (int, error) {
		v := future.Await(g)
		if fail {
			return 0, errors.New("failed")
		}
		return v, nil
	}))
	log = append(log, "fallible")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", strings.Join(log, ","), err)
	}
	return v + len(log), nil
}

// nested: an async literal inside an async literal, each capturing the
// enclosing ones' variables.
//
//blitz:async
func nested(g future.Future[int]) int {
	a := 1
	outer := future.Async(func() int {
		b := 10
		inner := future.Async(func() int {
			v := future.Await(g)
			a += 100
			return a + b + v
		})
		r := future.Await(inner)
		return r + a
	})
	return future.Await(outer) + a
}

// deferred: a literal's defers run when it returns, when it panics (the
// panic goes on to the enclosing function, whose defers run too) and when
// it is cancelled.
//
//blitz:async
func deferred(g future.Future[int], panics bool, trace *[]string) (int, error) {
	defer func() { *trace = append(*trace, "outer") }()
	return future.Try(future.AsyncFallible(func() (v int, err error) {
		defer func() { *trace = append(*trace, "inner") }()
		v = future.Await(g)
		if panics {
			panic("boom")
		}
		return v, nil
	}))
}

// generic: a literal in a generic function captures values of the type
// parameter.
//
//blitz:async
func generic[T any](v T, g future.Future[int]) []T {
	out := []T{v}
	f := future.Async(func() int {
		n := future.Await(g)
		for range n {
			out = append(out, v)
		}
		return n
	})
	future.Await(f)
	return out
}

// counter has an async method whose literal captures the receiver.
type counter struct{ n int }

// add adds the values of gs, each in a literal of its own.
//
//blitz:async
func (c *counter) add(gs []future.Future[int]) int {
	var fs []future.Future[struct{}]
	for _, g := range gs {
		fs = append(fs, future.AsyncDo(func() {
			c.n += future.Await(g)
		}))
	}
	for _, f := range fs {
		future.Await(f)
	}
	return c.n
}

// pool runs workers literals that take numbers from a shared channel-like
// counter and sum them, spawned as tasks into a JoinSet.
//
//blitz:async
func pool(workers, n int) (string, error) {
	next := 0
	var set blitz.JoinSet[int]
	defer set.Close()
	for range workers {
		set.Spawn(future.Cx(), future.Async(func() int {
			sum := 0
			for next < n {
				sum += next
				next++
				future.Await(blitz.Yield())
			}
			return sum
		}))
	}
	total := 0
	for {
		v, err := future.Try(set.Next())
		if errors.Is(err, blitz.ErrJoinSetEmpty) {
			return fmt.Sprint(total), nil
		}
		if err != nil {
			return "", err
		}
		total += v
	}
}

// spawner: a literal spawns a task of its own with future.Cx (its own
// poll's Context), waits in a select over futures, and writes the
// enclosing function's named result.
//
//blitz:async
func spawner(g future.Future[int]) (total int) {
	f := future.Async(func() int {
		h := blitz.Spawn(future.Cx(), future.Async(func() int {
			return future.Await(g) * 2
		}))
		//lint:ignore S1000 a select over futures, of one case on purpose
		select {
		case v := <-future.On(&h):
			total = v.Value
		}
		return total + 1
	})
	return future.Await(f) + total
}

// valueRecv has an async method with a value receiver, whose literal
// captures the receiver's copy.
type valueRecv struct{ base int }

// plus returns base plus what g gives, read in a literal.
//
//blitz:async
func (v valueRecv) plus(g future.Future[int]) int {
	v.base++ // the method's copy, which the literal shares
	return future.Await(future.Async(func() int { return v.base + future.Await(g) }))
}

// number is a constraint with a union, for ledger.
type number interface{ ~int | ~int64 | ~float64 }

// ledger is a generic type whose async method holds literals.
type ledger[K comparable, V number] struct {
	totals map[K]V
}

// addAll adds each future's value to key, each in a literal of its own
// that captures the receiver, the key and the iteration's variable. The
// receiver names its type parameters otherwise than the type does.
//
//blitz:async
func (l *ledger[Key, Val]) addAll(key Key, gs []future.Future[Val]) Val {
	var fs []future.Future[Val]
	for _, g := range gs {
		fs = append(fs, future.Async(func() Val {
			v := future.Await(g)
			l.totals[key] += v
			return v
		}))
	}
	var sum Val
	for _, f := range fs {
		sum += future.Await(f)
	}
	return sum
}
