package rangeasync

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/tests/internal/gentest"
	"github.com/blitz-go/blitz/waker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGeneratedCodeIsFresh(t *testing.T) { gentest.CheckFresh(t, "each_async.go") }

func newCx() *future.Context { return future.NewContext(waker.Noop()) }

// filled returns a closed channel holding vs.
func filled(vs ...int) *channels.Bounded[int] {
	c := channels.NewBounded[int](max(len(vs), 1))
	for _, v := range vs {
		if err := c.TrySend(v); err != nil {
			panic(err)
		}
	}
	c.Close()
	return c
}

// TestEachEndsAtClose: the loop receives every value in order and ends
// when the channel is closed and drained.
func TestEachEndsAtClose(t *testing.T) {
	got, ok := sumAsync(filled(1, 2, 3, 4)).Poll(newCx())
	if !ok || got != 10 {
		t.Fatalf("sum = %d, %v; want 10, true", got, ok)
	}
	if got, ok := sumAsync(filled()).Poll(newCx()); !ok || got != 0 {
		t.Fatalf("sum of an empty closed channel = %d, %v", got, ok)
	}
}

// TestEachWaits: on an open channel the loop waits for each value, and
// a value sent later is received.
func TestEachWaits(t *testing.T) {
	c := channels.NewBounded[int](4)
	f := sumAsync(c)
	cx := newCx()
	if _, ok := f.Poll(cx); ok {
		t.Fatal("completed on an empty open channel")
	}
	for v := range 5 {
		if err := c.TrySend(v); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.Poll(cx); ok {
			t.Fatal("completed before the close")
		}
	}
	c.Close()
	if got, ok := f.Poll(cx); !ok || got != 10 {
		t.Fatalf("sum = %d, %v; want 10, true", got, ok)
	}
}

// TestEachForms: continue, break, labels, shadowing, assignment to an
// existing variable and the loop without a variable, as Go runs them.
func TestEachForms(t *testing.T) {
	c := filled(
		2, 3, 4, -2, // first loop: even 2, (3 skipped), even 4, stop at -2
		5, 101, 7, 200, // labeled: 50, (101 continues outer), 70, stop at 200
		9, 8, 0, // last: stops at 0
		1, 1, 1, // rest: 3
	)
	got, ok := formsAsync(c).Poll(newCx())
	want := []string{"even 2", "even 4", "labeled 50", "labeled 70", "last 0", "rest 3"}
	if !ok || !slices.Equal(got, want) {
		t.Fatalf("forms = %q, %v; want %q", got, ok, want)
	}
}

// TestEachAssignKeepsTheLastValue: a range into an existing variable that
// runs to the stream's end leaves the variable at the last value received,
// and untouched when none was, as Go's range over a channel does.
func TestEachAssignKeepsTheLastValue(t *testing.T) {
	if got, ok := lastOfAsync(filled(7, 8, 9), -1).Poll(newCx()); !ok || got != 9 {
		t.Fatalf("lastOf(7, 8, 9) = %d, %v; want 9", got, ok)
	}
	if got, ok := lastOfAsync(filled(), -1).Poll(newCx()); !ok || got != -1 {
		t.Fatalf("lastOf() = %d, %v; want -1 (untouched)", got, ok)
	}
}

// TestEachEvaluatesTheStreamOnce: reassigning the receiver in the body
// does not change the stream (Go evaluates the method value once), and a
// stream written as a call is called once.
func TestEachEvaluatesTheStreamOnce(t *testing.T) {
	got, ok := reassignedAsync(filled(1, 2, 3), filled(100)).Poll(newCx())
	if !ok || !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("reassigned = %v, %v; want [1 2 3]", got, ok)
	}
	made := 0
	got, ok = spanningAsync(filled(4, 5), &made).Poll(newCx())
	if !ok || !slices.Equal(got, []int{4, 5}) || made != 1 {
		t.Fatalf("spanning = %v, %v, the stream made %d times; want [4 5], once", got, ok, made)
	}
}

// TestEachNested: an inner loop over a stream made from the outer loop's
// value.
func TestEachNested(t *testing.T) {
	inner := func(o int) *channels.Bounded[string] {
		c := channels.NewBounded[string](2)
		_ = c.TrySend("a")
		if o > 1 {
			_ = c.TrySend("b")
		}
		c.Close()
		return c
	}
	got, ok := nestedAsync(filled(1, 2), inner).Poll(newCx())
	if want := []string{"1a", "2a", "2b"}; !ok || !slices.Equal(got, want) {
		t.Fatalf("nested = %q, %v; want %q", got, ok, want)
	}
}

// TestEachEndsAtAnyError: a stream of its own ends at its first error.
func TestEachEndsAtAnyError(t *testing.T) {
	got, ok := countAsync(3).Poll(newCx())
	if !ok || !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("count = %v, %v; want [1 2 3]", got, ok)
	}
}

// TestEachCancelTakesNothing: cancelling the function while it waits in
// the loop cancels the pending receive, which took nothing: a value sent
// after the cancel is still in the channel.
func TestEachCancelTakesNothing(t *testing.T) {
	c := channels.NewBounded[int](1)
	f := sumAsync(c)
	if _, ok := f.Poll(newCx()); ok {
		t.Fatal("completed on an empty open channel")
	}
	future.Cancel(f)
	if err := c.TrySend(7); err != nil {
		t.Fatal(err)
	}
	if v, err := c.TryRecv(); err != nil || v != 7 {
		t.Fatalf("after the cancel the channel gave %d, %v; want 7", v, err)
	}
}

// TestEachWorkerPoolOnTheRuntime: async literals range over one channel
// on a runtime of two workers; every job is taken once, and the loops end
// when the channel is closed.
func TestEachWorkerPoolOnTheRuntime(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	n := 10000
	if testing.Short() {
		n = 1000
	}
	jobs := channels.NewBounded[int](8)
	go func() {
		defer jobs.Close()
		for i := 1; i <= n; i++ {
			if err := jobs.SendBlocking(context.Background(), i); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	r, err := blitz.BlockOn(context.Background(), rt.Handle(), workersAsync(jobs, 4))
	if err == nil {
		err = r.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := n * (n + 1) / 2; r.Value != want {
		t.Fatalf("the workers summed %d; want %d", r.Value, want)
	}
}

// TestEachSteadyStateDoesNotAllocate: a receive in the loop is held by
// value in the state machine (the method value is called in each pass),
// so that the loop allocates nothing per value.
func TestEachSteadyStateDoesNotAllocate(t *testing.T) {
	run := func(n int) float64 {
		c := channels.NewBounded[int](n)
		return testing.AllocsPerRun(5, func() {
			for i := range n {
				_ = c.TrySend(i)
			}
			f := sumAsync(c)
			cx := newCx()
			if _, ok := f.Poll(cx); ok {
				t.Fatal("completed on an open channel")
			}
			future.Cancel(f)
		})
	}
	small, large := run(10), run(1000)
	if large > small {
		t.Fatalf("1000 values allocate %.0f times, 10 values %.0f", large, small)
	}
}

// TestEachOutsideGeneratedCodePanics: the marker really called panics
// with ErrAwaitOutsideGenerated.
func TestEachOutsideGeneratedCodePanics(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, future.ErrAwaitOutsideGenerated) {
			t.Fatalf("recovered %v; want ErrAwaitOutsideGenerated", err)
		}
	}()
	for range future.Each(filled(1).Recv) {
		t.Fatal("ranged")
	}
}
