package asynclit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/tests/internal/gentest"
	"github.com/blitz-go/blitz/waker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newCx() *future.Context { return future.NewContext(waker.Noop()) }

// TestLiteralSharesCapturedVariables: the literal sees the enclosing
// function's write made after the literal was made and before it ran, and
// the enclosing function sees the literal's writes, across awaits on both
// sides.
func TestLiteralSharesCapturedVariables(t *testing.T) {
	g1, g2 := gentest.NewProbe(5), gentest.NewProbe(7)
	f := sharedAsync(g1, g2)
	cx := newCx()
	if _, ok := f.Poll(cx); ok {
		t.Fatal("completed before its futures")
	}
	g1.Complete()
	if _, ok := f.Poll(cx); ok {
		t.Fatal("completed before g2")
	}
	g2.Complete()
	r, ok := f.Poll(cx)
	if !ok || r.Err != nil {
		t.Fatalf("got %v, %v", r, ok)
	}
	// x: 1, then 2 before the literal runs, +10, +5 = 17, returned and seen.
	if want := "got 17 x 17 w 7"; r.Value != want {
		t.Fatalf("got %q, want %q", r.Value, want)
	}
}

// TestLiteralCapturesEachIterationsVariable: as with Go's closures since
// Go 1.22, the literal made in each iteration of a loop (which awaits, so
// the enclosing state machine keeps the variables in fields) sees that
// iteration's variables.
func TestLiteralCapturesEachIterationsVariable(t *testing.T) {
	tick := func() future.Future[int] { return future.Ready(0) }
	got, err := blitz.Run(context.Background(), perIterationAsync(4, tick))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 11, 22, 33}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestLiteralResultShapes: AsyncDo's literal runs for its effects,
// AsyncFallible's gives (T, error) through Try.
func TestLiteralResultShapes(t *testing.T) {
	v, err := blitz.RunFallible(context.Background(), fallibleAsync(false, future.Ready(40)))
	if err != nil || v != 42 {
		t.Fatalf("got %d, %v; want 42 (40 + the two log entries)", v, err)
	}
	_, err = blitz.RunFallible(context.Background(), fallibleAsync(true, future.Ready(40)))
	if err == nil || err.Error() != "do,fallible: failed" {
		t.Fatalf("got %v; want do,fallible: failed", err)
	}
}

// TestNestedLiterals: a literal inside a literal captures both enclosing
// functions' variables.
func TestNestedLiterals(t *testing.T) {
	g := gentest.NewProbe(1000)
	f := nestedAsync(g)
	cx := newCx()
	if _, ok := f.Poll(cx); ok {
		t.Fatal("completed before g")
	}
	g.Complete()
	v, ok := f.Poll(cx)
	// inner: a = 101, returns 101 + 10 + 1000 = 1111; outer returns
	// 1111 + 101; nested returns that + 101.
	if want := 1111 + 101 + 101; !ok || v != want {
		t.Fatalf("got %d, %v; want %d", v, ok, want)
	}
}

// TestLiteralDefersOnReturnPanicAndCancel: the literal's defers run when it
// returns, when it panics (and the panic reaches the enclosing function,
// whose defers run after), and when the enclosing function is cancelled
// while the literal waits (which cancels the future it awaits).
func TestLiteralDefersOnReturnPanicAndCancel(t *testing.T) {
	var trace []string
	v, err := blitz.RunFallible(context.Background(), deferredAsync(future.Ready(3), false, &trace))
	if v != 3 || err != nil || !slices.Equal(trace, []string{"inner", "outer"}) {
		t.Fatalf("return: got %d, %v, trace %v", v, err, trace)
	}

	trace = nil
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want boom", r)
			}
		}()
		deferredAsync(future.Ready(3), true, &trace).Poll(newCx())
	}()
	if !slices.Equal(trace, []string{"inner", "outer"}) {
		t.Fatalf("panic: trace %v", trace)
	}

	trace = nil
	g := gentest.NewProbe(1)
	f := deferredAsync(g, false, &trace)
	if _, ok := f.Poll(newCx()); ok {
		t.Fatal("completed before g")
	}
	future.Cancel(f)
	if _, cancelled, _ := g.State(); cancelled != 1 {
		t.Fatalf("the awaited future was cancelled %d times, want 1", cancelled)
	}
	if !slices.Equal(trace, []string{"inner", "outer"}) {
		t.Fatalf("cancel: trace %v", trace)
	}
}

// TestLiteralInGenericFunction: the literal is generic over the enclosing
// function's type parameters.
func TestLiteralInGenericFunction(t *testing.T) {
	got, err := blitz.Run(context.Background(), genericAsync("x", future.Ready(2)))
	if err != nil || !slices.Equal(got, []string{"x", "x", "x"}) {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestLiteralInMethodSpawnedAsTasks: literals made in a method's loop,
// capturing the receiver and each iteration's variable, run as tasks of
// their own on a runtime.
func TestLiteralInMethodSpawnedAsTasks(t *testing.T) {
	var gs []future.Future[int]
	for i := range 5 {
		gs = append(gs, future.Ready(i+1))
	}
	c := &counter{n: 100}
	got, err := blitz.Run(context.Background(), c.addAsync(gs))
	if err != nil || got != 115 || c.n != 115 {
		t.Fatalf("got %d, %v, c.n %d; want 115", got, err, c.n)
	}
}

// TestWorkersAsLiterals: the shape of a worker pool, each worker an async
// literal spawned into a JoinSet, sharing a counter with the enclosing
// function (on one worker thread, so that sharing it is not a race).
func TestWorkersAsLiterals(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 50
	}
	// One worker: the literals share next, and take turns at their awaits.
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	r, err := blitz.BlockOn(context.Background(), rt.Handle(), poolAsync(4, n))
	if err == nil {
		err = r.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	got := r.Value
	if want := fmt.Sprint(n * (n - 1) / 2); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestMarkerOutsideGeneratedCodePanics: the markers panic, naming the
// function and its constructor, if they really run.
func TestMarkerOutsideGeneratedCodePanics(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, future.ErrAwaitOutsideGenerated) {
			t.Fatalf("recovered %v", err)
		}
	}()
	async := future.Async[int] // a call through a value: blitzgen refuses a direct one here
	async(func() int { return 1 })
}

// TestLiteralSpawnsWithItsOwnContextAndSelects: future.Cx in a literal is
// the literal's Context (it spawns there), a select over futures works in
// a literal, and the literal writes the enclosing function's named result.
func TestLiteralSpawnsWithItsOwnContextAndSelects(t *testing.T) {
	got, err := blitz.Run(context.Background(), spawnerAsync(future.Ready(21)))
	if err != nil || got != 42+1+42 {
		t.Fatalf("got %d, %v; want %d", got, err, 42+1+42)
	}
}

// TestLiteralSharesAValueReceiversCopy: a literal in a method with a value
// receiver shares the method's copy, not the caller's value.
func TestLiteralSharesAValueReceiversCopy(t *testing.T) {
	v := valueRecv{base: 1}
	got, err := blitz.Run(context.Background(), v.plusAsync(future.Ready(10)))
	if err != nil || got != 12 || v.base != 1 {
		t.Fatalf("got %d, %v, base %d; want 12 and the caller's base unchanged", got, err, v.base)
	}
}

// TestLiteralInMethodOfGenericType: a literal in a method of a generic
// type (two type parameters, one constrained by a union, renamed by the
// receiver) captures the receiver and the loop's variable.
func TestLiteralInMethodOfGenericType(t *testing.T) {
	l := &ledger[string, float64]{totals: map[string]float64{"a": 0.5}}
	gs := []future.Future[float64]{future.Ready(1.0), future.Ready(2.5)}
	got, err := blitz.Run(context.Background(), l.addAllAsync("a", gs))
	if err != nil || got != 3.5 || l.totals["a"] != 4 {
		t.Fatalf("got %v, %v, total %v; want 3.5 and 4", got, err, l.totals["a"])
	}
}
