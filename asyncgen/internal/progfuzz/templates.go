package progfuzz

// The files of the temporary package the programs run in, besides the
// programs, their generated futures and their references.

// runPackage is the temporary package's name.
const runPackage = "progfuzzrun"

// envSource is env.go: the Env every program takes, futures whose
// readiness a seeded schedule decides and a log of side effects.
const envSource = `package progfuzzrun

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/blitz-go/blitz/future"
)

// Env is what a program sees: futures whose readiness a seeded random
// schedule decides, and a log of side effects.
type Env struct {
	rng *rand.Rand
	Log []string
	// Live counts the futures made and not yet completed or cancelled;
	// Made counts all the futures made (one per await).
	Live, Made int
}

// NewEnv returns an Env whose schedule seed decides.
func NewEnv(seed uint64) *Env { return &Env{rng: rand.New(rand.NewPCG(seed, 0x5eed))} }

// Note records a side effect. A program that notes more than maxLog
// lines runs away (a loop that does not end): it panics with errRunaway.
func (e *Env) Note(format string, args ...any) {
	if len(e.Log) >= maxLog {
		panic(errRunaway)
	}
	e.Log = append(e.Log, fmt.Sprintf(format, args...))
}

const maxLog = 100000

var errRunaway = errors.New("runaway: noted more than maxLog lines")

// Val returns a future of v that is pending for a random number of polls
// (waking its task each time) before it is ready.
func (e *Env) Val(v int) future.Future[int] {
	e.Live++
	e.Made++
	return &val{e: e, v: v, pending: e.rng.IntN(3)}
}

// Str is Val for a string.
func (e *Env) Str(s string) future.Future[string] {
	return future.Map(e.Val(0), func(int) string { return s })
}

type val struct {
	e       *Env
	v       int
	pending int
	done    bool
}

func (f *val) Poll(cx *future.Context) (int, bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if f.pending > 0 {
		f.pending--
		cx.Wake(cx.Waker())
		return 0, false
	}
	f.done = true
	f.e.Live--
	return f.v, true
}

func (f *val) Cancel() {
	if !f.done {
		f.done = true
		f.e.Live--
	}
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// first returns v.
func first(v int, _ error) int { return v }

// Rec is the receiver of the programs that are methods.
type Rec struct{ base int }

// Counter has a pointer method.
type Counter struct{ n int }

// Add adds k and returns the sum.
func (c *Counter) Add(k int) int {
	c.n += k
	return c.n
}

// Show notes c and k: a value method, whose receiver a deferred call
// copies at the defer statement.
func (c Counter) Show(e *Env, k int) { e.Note("Counter.Show n=%d k=%d", c.n, k) }

// Shower is what a deferred interface method value binds.
type Shower interface{ Show(e *Env, k int) }

// Boom notes k and panics if k is a multiple of 7: a deferred call that
// may panic, after which the other deferred calls still run.
func Boom(e *Env, k int) {
	e.Note("Boom %d", k)
	if k%7 == 0 {
		panic(fmt.Sprint("boom ", k))
	}
}

// Box is the generic receiver of the programs that are its methods.
type Box[T ~int] struct{ base T }

// Num is the type argument of the generic programs.
type Num int

// ErrOdd is the error of a Fallible future of an odd value.
var ErrOdd = errors.New("odd")

// Fallible is Val for a Result: v with ErrOdd if v is odd, v alone if it
// is even.
func (e *Env) Fallible(v int) future.Future[future.Result[int]] {
	return future.Map(e.Val(v), func(v int) future.Result[int] {
		if v%2 != 0 {
			return future.Result[int]{Value: v, Err: ErrOdd}
		}
		return future.Ok(v)
	})
}

// ErrEnd ends a Stream.
var ErrEnd = errors.New("end of stream")

// Stream returns the next function of a stream of k values, 10, 11, ...,
// each a future that Val schedules; the call after the k-th gives a
// future of ErrEnd, as does every call after it. future.Each ranges over
// it.
func (e *Env) Stream(k int) func() future.Future[future.Result[int]] {
	i := 0
	return func() future.Future[future.Result[int]] {
		if i >= k {
			return future.Map(e.Val(0), func(int) future.Result[int] { return future.Result[int]{Err: ErrEnd} })
		}
		i++
		return future.Map(e.Val(9+i), func(v int) future.Result[int] { return future.Ok(v) })
	}
}

// Text is Fallible for a string: s with ErrOdd if its length is odd.
func (e *Env) Text(s string) future.Future[future.Result[string]] {
	return future.Map(e.Fallible(len(s)), func(r future.Result[int]) future.Result[string] {
		return future.Result[string]{Value: s, Err: r.Err}
	})
}
`

// driverSource is driver_test.go without its table of cases: it runs
// every program generated and as its reference, and cancels the generated
// one at every await. A failure's message starts with failMark and the
// program's name.
const driverSource = `package progfuzzrun

import (
	"errors"
	"flag"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"

	"progfuzzrun/lib"
)

var (
	scheds = flag.Int("scheds", 10, "readiness schedules per program and argument")
	args   = flag.Int("args", 5, "arguments n = 0..args-1 per program")
)

// maxPolls bounds a run: a program that does not finish within it is
// reported instead of hanging the test.
const maxPolls = 1 << 20

var errTooLong = errors.New("did not complete within maxPolls polls")

// poll drives f to completion with a waker that does nothing (every leaf
// future of Env is ready after a few polls).
func poll[T any](f future.Future[T]) (T, error) {
	cx := future.NewContext(waker.Noop())
	for range maxPolls {
		if v, ok := f.Poll(cx); ok {
			return v, nil
		}
	}
	var zero T
	return zero, errTooLong
}

// awaitRef is future.Await in the reference programs. When refCancelAt
// is positive, the refCancelAt-th await (refAwaits counts them) cancels its
// future and panics with errRefCancelled: the reference of a generated
// program cancelled at that await, whose deferred calls run as the panic
// unwinds.
func awaitRef[T any](f future.Future[T]) T {
	refAwaits++
	if refAwaits == refCancelAt {
		future.Cancel(f)
		panic(errRefCancelled)
	}
	v, err := poll(f)
	if err != nil {
		panic(err)
	}
	return v
}

// refCancelAt and refAwaits drive awaitRef; the tests are not parallel.
var refCancelAt, refAwaits int

var errRefCancelled = errors.New("reference cancelled")

// callRef, callDoRef and callTryRef are an async function literal awaited
// where it is made, in the reference programs: a call of the literal.
func callRef[T any](fn func() T) T               { return fn() }
func callDoRef(fn func())                        { fn() }
func callTryRef[T any](fn func() (T, error)) (T, error) { return fn() }

// eachRef is future.Each in the reference programs: each pass awaits
// next()'s future, and the loop ends at the first error.
func eachRef[T any, F future.Future[future.Result[T]]](next func() F) iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			r := awaitRef[future.Result[T]](next())
			if r.Err != nil || !yield(r.Value) {
				return
			}
		}
	}
}

// tryRef is future.Try in the reference programs.
func tryRef[T any](f future.Future[future.Result[T]]) (T, error) {
	r := awaitRef(f)
	return r.Value, r.Err
}

// catch runs fn and returns what it panicked with, or nil.
func catch(fn func()) (p any) {
	defer func() { p = recover() }()
	fn()
	return nil
}

// outcome runs fn and returns its result, or what it panicked with.
func outcome(fn func() (string, error)) string {
	var out string
	var err error
	if p := catch(func() { out, err = fn() }); p != nil {
		return fmt.Sprintf("panic: %v", p)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

func show[T any](v T, err error) string { return fmt.Sprintf("%v / %v", v, err) }

func gen[T any](f future.Future[T]) future.Future[string] {
	return future.Map(f, func(v T) string {
		if r, ok := any(v).(future.Result[int]); ok {
			return show(r.Get())
		}
		return show(v, nil)
	})
}

type testCase struct {
	name string
	gen  func(e *Env, n int) future.Future[string]
	ref  func(e *Env, n int) string
}

// watch reports the program that runs longer than a minute (a loop that
// neither notes nor awaits) and ends the test binary, which would hang.
func watch(name string) (done func()) {
	stop := make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-time.After(time.Minute):
			fmt.Printf("FAILPROG %s : still running after a minute\n", name)
			os.Exit(1)
		}
	}()
	return func() { close(stop) }
}

func TestPrograms(t *testing.T) {
	runs := 0
	for _, c := range cases {
		done := watch(c.name)
		func() {
			for n := range *args {
				for seed := range uint64(*scheds) {
					eg, er := NewEnv(seed), NewEnv(seed)
					want := outcome(func() (string, error) { return c.ref(er, n), nil })
					got := outcome(func() (string, error) { return poll(c.gen(eg, n)) })
					if strings.Contains(got+want, errRunaway.Error()) {
						t.Errorf("FAILPROG %s n=%d sched=%d: generated %.200q; reference %.200q", c.name, n, seed, got, want)
						return
					}
					if got != want || !slices.Equal(eg.Log, er.Log) {
						t.Errorf("FAILPROG %s n=%d sched=%d: generated %q, log %q; reference %q, log %q", c.name, n, seed, got, eg.Log, want, er.Log)
						return
					}
					if eg.Live != 0 {
						t.Errorf("FAILPROG %s n=%d sched=%d: %d futures left pending", c.name, n, seed, eg.Live)
						return
					}
					runs++
				}
			}
		}()
		done()
	}
	t.Logf("RUNS %d", runs)
}

// TestCancelAtEveryAwait polls each generated program k times and cancels
// it, for every k up to its completion: no future made stays pending; the
// log is the reference's cancelled at the same await (the deferred calls
// due run, in Go's order); a poll after Cancel panics with
// future.ErrPolledAfterCancel.
func TestCancelAtEveryAwait(t *testing.T) {
	cx := future.NewContext(waker.Noop())
	for _, c := range cases {
		done := watch(c.name)
		func() {
			for n := range *args {
				for seed := range uint64(max(1, *scheds/4)) {
					for k := 0; k < maxPolls; k++ {
						e := NewEnv(seed)
						f := c.gen(e, n)
						done := false
						for range k {
							if p := catch(func() { _, done = f.Poll(cx) }); p != nil {
								done = true // it panicked: TestPrograms compares that
							}
							if done {
								break
							}
						}
						if done {
							break
						}
						got := catch(func() { future.Cancel(f) })
						if e.Live != 0 {
							t.Errorf("FAILPROG %s n=%d sched=%d k=%d: %d futures left pending after Cancel", c.name, n, seed, k, e.Live)
							return
						}
						ref := NewEnv(seed)
						var want any
						if e.Made > 0 {
							refAwaits, refCancelAt = 0, e.Made
							want = catch(func() { c.ref(ref, n) })
							refCancelAt = 0
						}
						if got == nil && e.Made > 0 {
							got = errRefCancelled // Cancel returned: the reference's panic went through
						}
						if fmt.Sprint(got) != fmt.Sprint(want) || !slices.Equal(e.Log, ref.Log) || ref.Live != 0 {
							t.Errorf("FAILPROG %s n=%d sched=%d k=%d: cancelled: panic %v, log %q; reference cancelled at await %d: panic %v, log %q, %d pending",
								c.name, n, seed, k, got, e.Log, e.Made, want, ref.Log, ref.Live)
							return
						}
						if !pollPanics(f, cx) {
							t.Errorf("FAILPROG %s n=%d sched=%d k=%d: a poll after Cancel did not panic with ErrPolledAfterCancel", c.name, n, seed, k)
							return
						}
					}
				}
			}
		}()
		done()
	}
}

func pollPanics(f future.Future[string], cx *future.Context) (ok bool) {
	defer func() {
		err, _ := recover().(error)
		ok = errors.Is(err, future.ErrPolledAfterCancel)
	}()
	f.Poll(cx)
	return false
}
`
