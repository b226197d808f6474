package selectasync

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/tests/internal/gentest"
	"github.com/blitz-go/blitz/waker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// poll polls f once with a context whose waker counts its wakes.
func poll[T any](f future.Future[T], cx *future.Context) (T, bool) { return f.Poll(cx) }

func newCx() *future.Context { return future.NewContext(waker.Noop()) }

// TestSelectOwnedLoserIsCancelled: the case that completes wins, and the
// select cancels the other, which it owns; a select whose cases are both
// pending waits, and completes when one completes.
func TestSelectOwnedLoserIsCancelled(t *testing.T) {
	a, b := gentest.NewProbe(1), gentest.NewProbe(2)
	f := pickAsync(a, b)
	cx := newCx()
	if _, ok := poll(f, cx); ok {
		t.Fatal("the select completed with no case ready")
	}
	b.Complete()
	got, ok := poll(f, cx)
	if !ok || got != "b 2" {
		t.Fatalf("got %q, %v; want b 2", got, ok)
	}
	if _, cancelled, taken := a.State(); cancelled != 1 || taken {
		t.Fatalf("the losing case: cancelled %d times, taken %v; want cancelled once", cancelled, taken)
	}
	if _, cancelled, _ := b.State(); cancelled != 0 {
		t.Fatalf("the winning case was cancelled %d times", cancelled)
	}
}

// TestSelectCancelWhileWaiting: an async function cancelled while it waits
// in a select cancels the futures the select owns, and only those.
func TestSelectCancelWhileWaiting(t *testing.T) {
	kept := gentest.NewProbe(9)
	var made []*gentest.Probe
	next := func() future.Future[int] { p := gentest.NewProbe(len(made)); made = append(made, p); return p }
	f := keepLoopAsync(kept, next, 5)
	cx := newCx()
	if _, ok := poll(f, cx); ok {
		t.Fatal("completed with nothing ready")
	}
	future.Cancel(f)
	if _, c, _ := made[0].State(); c != 1 {
		t.Fatalf("the owned future was cancelled %d times; want once", c)
	}
	if _, c, _ := kept.State(); c != 0 {
		t.Fatalf("the kept future was cancelled %d times; its owner cancels it", c)
	}
}

// TestSelectKeptFutureSurvivesLosing: a future given to OnKeep is left
// pending when another case wins, polled again by the next select, and
// wins when it completes; the owned futures that lose are cancelled.
func TestSelectKeptFutureSurvivesLosing(t *testing.T) {
	kept := gentest.NewProbe(100)
	var made []*gentest.Probe
	next := func() future.Future[int] { p := gentest.NewProbe(len(made)); made = append(made, p); return p }
	f := keepLoopAsync(kept, next, 10)
	cx := newCx()
	for i := range 3 {
		if _, ok := poll(f, cx); ok {
			t.Fatalf("round %d: completed early", i)
		}
		made[i].Complete()
	}
	if _, ok := poll(f, cx); ok {
		t.Fatal("completed early")
	}
	kept.Complete()
	got, ok := poll(f, cx)
	if !ok || !slices.Equal(got, []int{0, 1, 2, 100}) {
		t.Fatalf("got %v, %v; want [0 1 2 100]", got, ok)
	}
	polls, cancelled, taken := kept.State()
	if cancelled != 0 || !taken || polls < 4 {
		t.Fatalf("kept future: %d polls, cancelled %d times, taken %v; want polled by every select, never cancelled", polls, cancelled, taken)
	}
	if _, c, _ := made[3].State(); c != 1 {
		t.Fatalf("the receive that lost to the kept future was cancelled %d times; want once", c)
	}
}

// TestSelectDefault: the default clause runs when no case is ready at the
// select's first poll, and the owned case is cancelled; a ready case wins
// over the default.
func TestSelectDefault(t *testing.T) {
	p := gentest.NewProbe(5)
	got, ok := poll(orDefaultAsync(p), newCx())
	if !ok || got != -1 {
		t.Fatalf("got %d, %v; want the default, -1", got, ok)
	}
	if _, c, _ := p.State(); c != 1 {
		t.Fatalf("the pending case was cancelled %d times; want once", c)
	}
	got, ok = poll(orDefaultAsync(gentest.ReadyProbe(7)), newCx())
	if !ok || got != 7 {
		t.Fatalf("got %d, %v; want the ready case, 7", got, ok)
	}
}

// TestSelectNilFutureIsNeverChosen: as a case on a nil channel in Go, a
// case whose future is nil never wins; the other case does.
func TestSelectNilFutureIsNeverChosen(t *testing.T) {
	b := gentest.NewProbe(3)
	f := pickAsync(nil, b)
	cx := newCx()
	if _, ok := poll(f, cx); ok {
		t.Fatal("completed with only a nil case and a pending one")
	}
	b.Complete()
	if got, ok := poll(f, cx); !ok || got != "b 3" {
		t.Fatalf("got %q, %v; want b 3", got, ok)
	}
	if got, ok := poll(orDefaultAsync(nil), newCx()); !ok || got != -1 {
		t.Fatalf("a nil case with a default: got %d, %v; want the default", got, ok)
	}
}

// TestSelectTurns: with both cases always ready, successive selects start
// with a different case, so that neither starves the other.
func TestSelectTurns(t *testing.T) {
	a := func() future.Future[int] { return gentest.ReadyProbe(0) }
	b := func() future.Future[int] { return gentest.ReadyProbe(1) }
	got, ok := poll(fairnessAsync(a, b, 8), newCx())
	if !ok || !slices.Equal(got, []int{0, 1, 0, 1, 0, 1, 0, 1}) {
		t.Fatalf("got %v, %v; want the cases in turn", got, ok)
	}
}

// TestSelectForms: every form of a case, break, a labeled select,
// continue, an await in a case and a nested select behave as in Go.
func TestSelectForms(t *testing.T) {
	var log []string
	f := func(v int) future.Future[int] { return gentest.ReadyProbe(v) }
	got, err := future.Block(context.Background(), formsAsync(f, &log))
	if err != nil || got != 21 {
		t.Fatalf("got %d, %v; want 21", got, err)
	}
	want := []string{
		"assigned 10", "end of step 0",
		"field 11", "end of step 1",
		"discarded", "no value", "end of step 2",
		"left the labeled select", "end of step 3",
		"awaited in a case 16",
		"nested 20 21", "end of step 5",
	}
	if !slices.Equal(log, want) {
		t.Fatalf("log:\n%q\nwant:\n%q", log, want)
	}
}

// TestSelectSteadyStateDoesNotAllocate: a select in a loop reuses its
// cases: 1000 selects allocate what 10 do (the futures made by the test
// aside, which are ready ones made once).
func TestSelectSteadyStateDoesNotAllocate(t *testing.T) {
	a, b := gentest.ReadyProbe(0), gentest.ReadyProbe(1)
	same := func(p *gentest.Probe) func() future.Future[int] {
		return func() future.Future[int] { p.Reset(); return p }
	}
	run := func(n int) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, ok := poll(fairnessAsync(same(a), same(b), n), newCx()); !ok {
				t.Fatal("did not complete")
			}
		})
	}
	small, large := run(10), run(1000)
	t.Logf("allocations per run: 10 selects %.0f, 1000 selects %.0f", small, large)
	if large > small+30 { // append's growth of the result slice: about log2(1000)
		t.Fatalf("1000 selects allocate %.0f times, 10 selects %.0f", large, small)
	}
}

// TestTickerOnTheRuntime: the ticker shape on the runtime. The interval
// keeps ticking across selects (no "polled after cancel"), each message is
// received once and none is lost to a receive that lost, and the stop ends
// the loop.
func TestTickerOnTheRuntime(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	h := rt.Handle()
	iv, err := blitz.NewInterval(5*time.Millisecond, blitz.Skip)
	if err != nil {
		t.Fatal(err)
	}
	msgs := channels.NewBounded[string](4)
	stopTx, stopRx := channels.NewOneshot[struct{}]()
	stop := future.Map(stopRx.Recv(), func(future.Result[struct{}]) struct{} { return struct{}{} })
	task := blitz.SpawnOn(h, tickerAsync(iv, msgs, stop))
	const n = 20
	for i := range n {
		if err := msgs.SendBlocking(context.Background(), string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // a few more ticks
	for msgs.Len() > 0 {
		time.Sleep(time.Millisecond)
	}
	if err := stopTx.Send(struct{}{}); err != nil {
		t.Fatal(err)
	}
	res, err := blitz.BlockOn(context.Background(), h, task)
	if err != nil || res.Err != nil {
		t.Fatalf("ticker: %v, %v", err, res.Err)
	}
	seen, err := res.Value.Get()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	ticks := 0
	for _, s := range seen {
		if len(s) > 4 && s[:4] == "msg " {
			got = append(got, s[4:])
		} else {
			ticks++
		}
	}
	var want []string
	for i := range n {
		want = append(want, string(rune('a'+i)))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("messages %q; want %q in order, each once", got, want)
	}
	if ticks < 2 {
		t.Fatalf("%d ticks in %v; the interval stopped ticking", ticks, seen)
	}
	iv.Cancel()
}

// TestTickerClosedChannel: a closed channel's receive wins with
// channels.ErrClosed, which the ticker returns.
func TestTickerClosedChannel(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	iv, err := blitz.NewInterval(time.Hour, blitz.Skip)
	if err != nil {
		t.Fatal(err)
	}
	defer iv.Cancel()
	msgs := channels.NewBounded[string](1)
	msgs.Close()
	never := future.PollFn(func(*future.Context) (struct{}, bool) { return struct{}{}, false })
	res, err := blitz.BlockOn(context.Background(), rt.Handle(), tickerAsync(iv, msgs, never))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Get(); !errors.Is(err, channels.ErrClosed) {
		t.Fatalf("got %v; want channels.ErrClosed", err)
	}
}

// TestSelectOverChannelsDoesNotAllocate: a select between two channels'
// receives made in its cases (future.On(c.Recv())) copies each receive
// into its case's storage: 1000 selects allocate what 10 do.
func TestSelectOverChannelsDoesNotAllocate(t *testing.T) {
	run := func(n int) float64 {
		x, y := channels.NewBounded[int](n), channels.NewBounded[int](n)
		return testing.AllocsPerRun(5, func() {
			for i := range n {
				_ = x.TrySend(i)
				_ = y.TrySend(i)
			}
			if _, err := future.Block(context.Background(), drainAsync(x, y, n)); err != nil {
				t.Fatal(err)
			}
			if left := x.Len() + y.Len(); left != n {
				t.Fatalf("%d values left of %d sent, after %d receives", left, 2*n, n)
			}
			for x.Len() > 0 {
				_, _ = x.TryRecv()
			}
			for y.Len() > 0 {
				_, _ = y.TryRecv()
			}
		})
	}
	small, large := run(10), run(1000)
	t.Logf("allocations per run: 10 selects %.0f, 1000 selects %.0f", small, large)
	if large > small+2 {
		t.Fatalf("1000 selects allocate %.0f times, 10 selects %.0f", large, small)
	}
}
