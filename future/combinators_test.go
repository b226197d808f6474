package future_test

import (
	"errors"
	"runtime"
	"strconv"
	"testing"
	"weak"

	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadyCompletesOnFirstPoll(t *testing.T) {
	cx, _ := newCx()
	v, ok := future.Ready(42).Poll(cx)
	require.True(t, ok)
	require.Equal(t, 42, v)
}

func TestPendingNeverCompletes(t *testing.T) {
	cx, cw := newCx()
	f := future.Pending[string]()
	for range 3 {
		_, ok := f.Poll(cx)
		require.False(t, ok)
	}
	require.Zero(t, cw.n.Load(), "Pending registers nothing, so nothing wakes")
}

func TestPollFnCallsFnUntilItIsReady(t *testing.T) {
	cx, _ := newCx()
	calls := 0
	f := future.PollFn(func(cx *future.Context) (int, bool) {
		calls++
		cx.Waker().Wake() // ready next time: wake ourselves
		return calls * 10, calls == 3
	})
	for range 2 {
		_, ok := f.Poll(cx)
		require.False(t, ok)
	}
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 30, v)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) })
	require.Equal(t, 3, calls, "fn is not called after completion")
}

func TestMapAppliesFnOnceToTheValue(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	p := future.NewProbe[int](&reg)
	calls := 0
	f := future.Map(p, func(x int) string { calls++; return strconv.Itoa(x * 2) })
	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Zero(t, calls)
	p.Complete(21)
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, "42", v)
	require.Equal(t, 1, calls)
}

func TestThenPollsTheSecondFutureInTheSamePoll(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	first := future.NewProbe[int](&reg)
	second := future.NewProbe[int](&reg)
	f := future.Then(first, func(x int) future.Future[int] {
		return future.Map(second, func(y int) int { return x + y })
	})
	_, ok := f.Poll(cx)
	require.False(t, ok)
	first.Complete(1)
	_, ok = f.Poll(cx)
	require.False(t, ok)
	st := second.Stats()
	require.Equal(t, 1, st.Polls, "the second future is polled in the Poll that sees the first complete")
	require.True(t, st.Registered, "and so it registers for a wake")

	// A chain of ready steps completes in one Poll.
	g := future.Then(future.Ready(2), func(x int) future.Future[int] { return future.Ready(x * 3) })
	v, ok := g.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 6, v)
}

func TestJoinAllPollsEveryUnfinishedChildOnEachPoll(t *testing.T) {
	cx, cw := newCx()
	var reg future.Registry
	ps := probes(&reg, 3)
	f := future.JoinAll(asFutures(ps)...)
	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, []int{1, 1, 1}, polls(ps))
	require.Equal(t, 3, reg.Len())

	ps[1].Complete(11)
	require.Equal(t, int32(1), cw.n.Load(), "a completing child wakes the join's task")
	_, ok = f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, []int{2, 2, 2}, polls(ps))

	ps[2].Complete(12)
	ps[0].Complete(10)
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, []int{10, 11, 12}, v, "values in argument order, not completion order")
	require.Equal(t, []int{3, 2, 3}, polls(ps), "a finished child is not polled again")
	require.Equal(t, []int{0, 0, 0}, cancels(ps), "completed children are never cancelled")
	require.Zero(t, reg.Len())
}

func TestJoinAllOfNothingCompletesAtOnce(t *testing.T) {
	cx, _ := newCx()
	v, ok := future.JoinAll[int]().Poll(cx)
	require.True(t, ok)
	require.Empty(t, v)
	r, ok := future.TryJoinAll[int]().Poll(cx)
	require.True(t, ok)
	require.NoError(t, r.Err)
	require.Empty(t, r.Value)
}

func TestJoin2WaitsForBoth(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	a := future.NewProbe[int](&reg)
	f := future.Join2(a, future.Ready("b"))
	_, ok := f.Poll(cx)
	require.False(t, ok)
	a.Complete(1)
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.Pair[int, string]{First: 1, Second: "b"}, v)
}

func TestTryJoinAllFailureCancelsThePendingChildren(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	ps := make([]*future.Probe[future.Result[int]], 4)
	for i := range ps {
		ps[i] = future.NewProbe[future.Result[int]](&reg)
	}
	f := future.TryJoinAll(asFutures(ps)...)
	_, ok := f.Poll(cx)
	require.False(t, ok)

	boom := errors.New("boom")
	ps[1].Complete(future.Ok(1))
	ps[2].Complete(future.Fail[int](boom))
	r, ok := f.Poll(cx)
	require.True(t, ok)
	require.Same(t, boom, r.Err, "the error is returned as is")
	require.Nil(t, r.Value)
	require.Equal(t, []int{1, 0, 0, 1}, cancels(ps), "the pending children, and only those, are cancelled once")
	require.Zero(t, reg.Len(), "a failed join leaves nothing registered")
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) })
}

func TestTryJoinAllSucceedsWithEveryValue(t *testing.T) {
	cx, _ := newCx()
	f := future.TryJoinAll(future.Ready(future.Ok(1)), future.Ready(future.Ok(2)))
	r, ok := f.Poll(cx)
	require.True(t, ok)
	require.NoError(t, r.Err)
	require.Equal(t, []int{1, 2}, r.Value)
}

func TestTryJoin2FailureCancelsTheOtherChild(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	a := future.NewProbe[future.Result[int]](&reg)
	b := future.NewProbe[future.Result[string]](&reg)
	f := future.TryJoin2(a, b)
	_, ok := f.Poll(cx)
	require.False(t, ok)
	boom := errors.New("boom")
	b.Complete(future.Fail[string](boom))
	r, ok := f.Poll(cx)
	require.True(t, ok)
	require.Same(t, boom, r.Err)
	require.Equal(t, 1, a.Stats().Cancels)
	require.Zero(t, b.Stats().Cancels)
	require.Zero(t, reg.Len())

	g := future.TryJoin2(future.Ready(future.Ok(1)), future.Ready(future.Ok("x")))
	r, ok = g.Poll(cx)
	require.True(t, ok)
	require.NoError(t, r.Err)
	require.Equal(t, future.Pair[int, string]{First: 1, Second: "x"}, r.Value)
}

func TestRaceCancelsEveryLoserExactlyOnce(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	ps := probes(&reg, 4)
	f := future.Race(asFutures(ps)...)
	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, []int{1, 1, 1, 1}, polls(ps), "a race polls every child, not one after another")
	require.Equal(t, 4, reg.Len())

	ps[2].Complete(7)
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 7, v)
	require.Equal(t, []int{1, 1, 0, 1}, cancels(ps), "every loser, before and after the winner, is cancelled once")
	require.Equal(t, []int{2, 2, 2, 1}, polls(ps), "children after the winner are not polled")
	require.Zero(t, reg.Len(), "the losers leave nothing registered")
	future.Cancel(f)
	require.Equal(t, []int{1, 1, 0, 1}, cancels(ps), "Cancel after completion cancels nothing")
}

func TestRaceCancelsLosersThatWereNeverPolled(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	ps := probes(&reg, 2)
	f := future.Race(ps[0], future.Ready(5), ps[1])
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 5, v)
	require.Equal(t, []int{1, 0}, polls(ps))
	require.Equal(t, []int{1, 1}, cancels(ps))
	require.Zero(t, reg.Len())
}

func TestRaceIsBiasedTowardsTheLowestIndex(t *testing.T) {
	cx, _ := newCx()
	v, ok := future.Select(future.Pending[int](), future.Ready(1), future.Ready(2)).Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.Selected[int]{Index: 1, Value: 1}, v)
	w, ok := future.Race(future.Ready("a"), future.Ready("b")).Poll(cx)
	require.True(t, ok)
	require.Equal(t, "a", w)
}

func TestSelectReportsTheWinner(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	ps := probes(&reg, 3)
	f := future.Select(asFutures(ps)...)
	_, ok := f.Poll(cx)
	require.False(t, ok)
	ps[1].Complete(9)
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.Selected[int]{Index: 1, Value: 9}, v)
	require.Equal(t, []int{1, 0, 1}, cancels(ps))
	require.Zero(t, reg.Len())
}

func TestSelect2ReportsTheWinnerAndCancelsTheLoser(t *testing.T) {
	cx, _ := newCx()
	var reg future.Registry
	a := future.NewProbe[int](&reg)
	b := future.NewProbe[string](&reg)
	f := future.Select2(a, b)
	_, ok := f.Poll(cx)
	require.False(t, ok)
	b.Complete("b")
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.Selected2[int, string]{Index: 1, Second: "b"}, v)
	require.Equal(t, 1, a.Stats().Cancels)
	require.Zero(t, b.Stats().Cancels)
	require.Zero(t, reg.Len())

	w, ok := future.Select2(future.Ready(1), future.Ready("x")).Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.Selected2[int, string]{Index: 0, First: 1}, w)
}

func TestRaceOrSelectOfNothingPanics(t *testing.T) {
	require.PanicsWithValue(t, future.ErrEmpty, func() { future.Race[int]() })
	require.PanicsWithValue(t, future.ErrEmpty, func() { future.Select[int]() })
}

func TestNilFuturePanicsAtConstruction(t *testing.T) {
	var nilF future.Future[int]
	for name, fn := range map[string]func(){
		"Map":        func() { future.Map(nilF, func(int) int { return 0 }) },
		"MapFn":      func() { future.Map[int, int](future.Ready(1), nil) },
		"Then":       func() { future.Then(nilF, future.Ready[int]) },
		"PollFn":     func() { future.PollFn[int](nil) },
		"Join2":      func() { future.Join2(future.Ready(1), nilF) },
		"JoinAll":    func() { future.JoinAll(future.Ready(1), nilF) },
		"TryJoin2":   func() { future.TryJoin2[int, int](nil, future.Ready(future.Ok(1))) },
		"TryJoinAll": func() { future.TryJoinAll[int](nil) },
		"Race":       func() { future.Race(nilF) },
		"Select":     func() { future.Select(future.Ready(1), nilF) },
		"Select2":    func() { future.Select2[int, int](nilF, future.Ready(1)) },
	} {
		require.PanicsWithValue(t, future.ErrNilFuture, fn, name)
	}
	cx, _ := newCx()
	f := future.Then(future.Ready(1), func(int) future.Future[int] { return nil })
	require.PanicsWithValue(t, future.ErrNilFuture, func() { f.Poll(cx) }, "Then's fn returned nil")
}

// cancelCase builds a combinator over probes, brings some children to
// completion, and says which probes Cancel must reach.
type cancelCase struct {
	name string
	// setup returns the combinator, after at least one Poll, and the probes
	// with the Cancel count each must have after the combinator's Cancel.
	setup func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int)
}

func pollPending(t *testing.T, cx *future.Context, f future.Future[int]) {
	t.Helper()
	_, ok := f.Poll(cx)
	require.False(t, ok)
}

var sum = func(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func cancelCases(t *testing.T) []cancelCase {
	return []cancelCase{
		{"Map", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 1)
			f := future.Map(ps[0], func(x int) int { return x })
			pollPending(t, cx, f)
			return f, ps, []int{1}
		}},
		{"ThenFirst", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 2)
			f := future.Then(ps[0], func(int) future.Future[int] { return ps[1] })
			pollPending(t, cx, f)
			return f, ps, []int{1, 0}
		}},
		{"ThenSecond", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 2)
			f := future.Then(ps[0], func(int) future.Future[int] { return ps[1] })
			pollPending(t, cx, f)
			ps[0].Complete(1)
			pollPending(t, cx, f)
			return f, ps, []int{0, 1}
		}},
		{"Join2", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 2)
			f := future.Map(future.Join2(ps[0], ps[1]), func(p future.Pair[int, int]) int { return p.First })
			pollPending(t, cx, f)
			ps[0].Complete(1)
			pollPending(t, cx, f)
			return f, ps, []int{0, 1}
		}},
		{"JoinAll", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 4)
			f := future.Map(future.JoinAll(asFutures(ps)...), sum)
			pollPending(t, cx, f)
			ps[0].Complete(1)
			ps[2].Complete(1)
			pollPending(t, cx, f)
			return f, ps, []int{0, 1, 0, 1}
		}},
		{"TryJoin2", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 2)
			f := future.Map(future.TryJoin2(future.Map(ps[0], future.Ok[int]), future.Map(ps[1], future.Ok[int])),
				func(r future.Result[future.Pair[int, int]]) int { return r.Value.First })
			pollPending(t, cx, f)
			ps[1].Complete(1)
			pollPending(t, cx, f)
			return f, ps, []int{1, 0}
		}},
		{"TryJoinAll", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 3)
			fs := make([]future.Future[future.Result[int]], len(ps))
			for i, p := range ps {
				fs[i] = future.Map(p, future.Ok[int])
			}
			f := future.Map(future.TryJoinAll(fs...), func(r future.Result[[]int]) int { return sum(r.Value) })
			pollPending(t, cx, f)
			ps[1].Complete(1)
			pollPending(t, cx, f)
			return f, ps, []int{1, 0, 1}
		}},
		{"Race", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 3)
			f := future.Race(asFutures(ps)...)
			pollPending(t, cx, f)
			return f, ps, []int{1, 1, 1}
		}},
		{"Select", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 3)
			f := future.Map(future.Select(asFutures(ps)...), func(s future.Selected[int]) int { return s.Value })
			pollPending(t, cx, f)
			return f, ps, []int{1, 1, 1}
		}},
		{"Select2", func(cx *future.Context, reg *future.Registry) (future.Future[int], []*future.Probe[int], []int) {
			ps := probes(reg, 2)
			f := future.Map(future.Select2(ps[0], ps[1]), func(s future.Selected2[int, int]) int { return s.First })
			pollPending(t, cx, f)
			return f, ps, []int{1, 1}
		}},
	}
}

func TestCancelCancelsOnlyTheUnfinishedChildrenOnce(t *testing.T) {
	for _, tc := range cancelCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			cx, _ := newCx()
			var reg future.Registry
			f, ps, want := tc.setup(cx, &reg)
			future.Cancel(f)
			require.Equal(t, want, cancels(ps))
			require.Zero(t, reg.Len(), "a cancelled future leaves nothing registered")
			future.Cancel(f)
			require.Equal(t, want, cancels(ps), "Cancel is idempotent")
			require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { f.Poll(cx) })
			for i, p := range ps {
				assert.Zero(t, p.Stats().Misuse, "probe %d", i)
			}
		})
	}
}

func TestCancelBeforeAnyPollCancelsEveryChild(t *testing.T) {
	var reg future.Registry
	ps := probes(&reg, 3)
	f := future.JoinAll(asFutures(ps)...)
	future.Cancel(f)
	require.Equal(t, []int{1, 1, 1}, cancels(ps))
	require.Equal(t, []int{0, 0, 0}, polls(ps))
}

// everyCombinator returns one ready instance of each future of the package,
// each completing on its first Poll.
func everyCombinator() map[string]func() future.Future[int] {
	r := future.Ready[int]
	rr := func(v int) future.Future[future.Result[int]] { return future.Ready(future.Ok(v)) }
	return map[string]func() future.Future[int]{
		"Ready":  func() future.Future[int] { return r(1) },
		"PollFn": func() future.Future[int] { return future.PollFn(func(*future.Context) (int, bool) { return 1, true }) },
		"Map":    func() future.Future[int] { return future.Map(r(1), func(x int) int { return x }) },
		"Then":   func() future.Future[int] { return future.Then(r(1), r) },
		"Race":   func() future.Future[int] { return future.Race(r(1), r(2)) },
		"Join2": func() future.Future[int] {
			return future.Map(future.Join2(r(1), r(2)), func(future.Pair[int, int]) int { return 0 })
		},
		"JoinAll": func() future.Future[int] {
			return future.Map(future.JoinAll(r(1), r(2)), sum)
		},
		"TryJoin2": func() future.Future[int] {
			return future.Map(future.TryJoin2(rr(1), rr(2)), func(future.Result[future.Pair[int, int]]) int { return 0 })
		},
		"TryJoinAll": func() future.Future[int] {
			return future.Map(future.TryJoinAll(rr(1), rr(2)), func(future.Result[[]int]) int { return 0 })
		},
		"Select": func() future.Future[int] {
			return future.Map(future.Select(r(1)), func(future.Selected[int]) int { return 0 })
		},
		"Select2": func() future.Future[int] {
			return future.Map(future.Select2(r(1), r(2)), func(future.Selected2[int, int]) int { return 0 })
		},
	}
}

func TestPollAfterCompletionPanics(t *testing.T) {
	cx, _ := newCx()
	for name, mk := range everyCombinator() {
		f := mk()
		_, ok := f.Poll(cx)
		require.True(t, ok, name)
		require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) }, name)
		future.Cancel(f)
		require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) }, "%s: Cancel after completion changes nothing", name)
	}
	// The combinators themselves, not only the Map around them.
	f := future.Select2(future.Ready(1), future.Ready(2))
	_, ok := f.Poll(cx)
	require.True(t, ok)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) })
	g := future.JoinAll(future.Ready(1))
	_, ok = g.Poll(cx)
	require.True(t, ok)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { g.Poll(cx) })
}

func TestPollAfterCancelPanics(t *testing.T) {
	cx, _ := newCx()
	mks := everyCombinator()
	mks["Pending"] = future.Pending[int]
	for name, mk := range mks {
		f := mk()
		future.Cancel(f)
		require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { f.Poll(cx) }, name)
	}
}

// TestCombinatorsDropTheirChildren checks with weak pointers that a
// combinator that completed or was cancelled no longer keeps its children
// (or their values) reachable.
func TestCombinatorsDropTheirChildren(t *testing.T) {
	// big is large enough that the GC does not batch it with other objects
	// in a tiny-alloc block, which would keep it alive with them.
	type big struct{ _ [1 << 10]byte }
	mk := map[string]func(reg *future.Registry) (future.Future[*big], weak.Pointer[future.Probe[*big]]){}
	for _, name := range []string{"Map", "Then", "JoinAll", "Race", "Select2"} {
		mk[name] = func(reg *future.Registry) (future.Future[*big], weak.Pointer[future.Probe[*big]]) {
			p := future.NewProbe[*big](reg)
			var f future.Future[*big]
			switch name {
			case "Map":
				f = future.Map(p, func(b *big) *big { return b })
			case "Then":
				f = future.Then(p, future.Ready[*big])
			case "JoinAll":
				f = future.Map(future.JoinAll[*big](p), func(bs []*big) *big { return bs[0] })
			case "Race":
				f = future.Race[*big](future.Pending[*big](), p)
			case "Select2":
				f = future.Map(future.Select2[*big, int](p, future.Pending[int]()), func(s future.Selected2[*big, int]) *big { return s.First })
			}
			return f, weak.Make(p)
		}
	}
	for name, build := range mk {
		for _, cancel := range []bool{false, true} {
			cx, _ := newCx()
			var reg future.Registry
			f, wp := build(&reg)
			_, ok := f.Poll(cx)
			require.False(t, ok)
			if cancel {
				future.Cancel(f)
			} else {
				wp.Value().Complete(&big{})
				_, ok = f.Poll(cx)
				require.True(t, ok)
			}
			for range 3 {
				runtime.GC()
			}
			require.Nil(t, wp.Value(), "%s (cancel %v) still holds its child", name, cancel)
			runtime.KeepAlive(f)
		}
	}
}

// TestPollAllocatesNothing checks that polling a pending combinator does not
// allocate: the combinators keep their state in what they made at
// construction.
func TestPollAllocatesNothing(t *testing.T) {
	cx, _ := newCx()
	p := func() future.Future[int] { return future.Pending[int]() }
	fs := map[string]future.Future[int]{
		"JoinAll": future.Map(future.JoinAll(p(), p(), p()), sum),
		"Race":    future.Race(p(), p(), p()),
		"Then":    future.Then(p(), future.Ready[int]),
		"Select2": future.Map(future.Select2(p(), p()), func(future.Selected2[int, int]) int { return 0 }),
		"TryJoin": future.Map(future.TryJoinAll(future.Pending[future.Result[int]](), future.Pending[future.Result[int]]()),
			func(future.Result[[]int]) int { return 0 }),
	}
	for name, f := range fs {
		allocs := testing.AllocsPerRun(100, func() { f.Poll(cx) })
		require.Zero(t, allocs, name)
	}
}
