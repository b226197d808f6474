package equiv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// awaitRef is future.Await in the reference functions (funcs_ref_test.go):
// it blocks the goroutine on f.
func awaitRef[T any](f future.Future[T]) T {
	refAwaits++
	if refAwaits == refCancelAt {
		future.Cancel(f)
		panic(errRefCancelled)
	}
	v, err := future.Block(context.Background(), f)
	if err != nil {
		panic(err)
	}
	return v
}

// refCancelAt, when positive, makes the reference's refCancelAt-th await
// (refAwaits counts them) cancel its future and panic with errRefCancelled:
// the reference of a generated function cancelled at that await, whose
// deferred calls Go runs as the panic unwinds. The tests are not parallel.
var refCancelAt, refAwaits int

var errRefCancelled = errors.New("reference cancelled")

// catch runs fn and returns what it panicked with, or nil.
func catch(fn func()) (p any) {
	defer func() { p = recover() }()
	fn()
	return nil
}

// outcome runs fn and returns its result, or what it panicked with.
func outcome(fn func() string) (out string) {
	if p := catch(func() { out = fn() }); p != nil {
		return fmt.Sprintf("panic: %v", p)
	}
	return out
}

// tryRef is future.Try in the reference functions.
func tryRef[T any](f future.Future[future.Result[T]]) (T, error) {
	r := awaitRef(f)
	return r.Value, r.Err
}

func show[T any](v T, err error) string { return fmt.Sprintf("%v / %v", v, err) }

func gen[T any](f future.Future[T]) future.Future[string] {
	return future.Map(f, func(v T) string {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Struct && strings.HasPrefix(rv.Type().Name(), "Result[") {
			err, _ := rv.FieldByName("Err").Interface().(error)
			return show(rv.FieldByName("Value").Interface(), err)
		}
		if r, ok := any(v).(future.Result[int]); ok {
			return show(r.Get())
		}
		if r, ok := any(v).(future.Result[string]); ok {
			return show(r.Get())
		}
		if r, ok := any(v).(future.Result[any]); ok {
			return show(r.Get())
		}
		return show(v, nil)
	})
}

// cases pairs each generated function with its reference.
var cases = []struct {
	name string
	gen  func(e *Env, n int) future.Future[string]
	ref  func(e *Env, n int) string
}{
	{"localConsts", func(e *Env, n int) future.Future[string] { return gen(localConstsAsync(e, n)) },
		func(e *Env, n int) string { return show(localConstsRef(e, n)) }},
	{"sequence", func(e *Env, n int) future.Future[string] { return gen(sequenceAsync(e, n)) },
		func(e *Env, n int) string { return show(sequenceRef(e, n), nil) }},
	{"noResult", func(e *Env, n int) future.Future[string] { return gen(noResultAsync(e, n)) },
		func(e *Env, n int) string { noResultRef(e, n); return show(struct{}{}, nil) }},
	{"branch", func(e *Env, n int) future.Future[string] { return gen(branchAsync(e, n)) },
		func(e *Env, n int) string { return show(branchRef(e, n)) }},
	{"loop", func(e *Env, n int) future.Future[string] { return gen(loopAsync(e, n)) },
		func(e *Env, n int) string { return show(loopRef(e, n), nil) }},
	{"countdown", func(e *Env, n int) future.Future[string] { return gen(countdownAsync(e, n)) },
		func(e *Env, n int) string { return show(countdownRef(e, n), nil) }},
	{"forever", func(e *Env, n int) future.Future[string] { return gen(foreverAsync(e, n)) },
		func(e *Env, n int) string { return show(foreverRef(e, n)) }},
	{"nested", func(e *Env, n int) future.Future[string] { return gen(nestedAsync(e, n)) },
		func(e *Env, n int) string { return show(nestedRef(e, n), nil) }},
	{"shadow", func(e *Env, n int) future.Future[string] { return gen(shadowAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowRef(e, n), nil) }},
	{"decls", func(e *Env, n int) future.Future[string] { return gen(declsAsync(e, n)) },
		func(e *Env, n int) string { return show(declsRef(e, n)) }},
	{"closures", func(e *Env, n int) future.Future[string] { return gen(closuresAsync(e, n)) },
		func(e *Env, n int) string { return show(closuresRef(e, n), nil) }},
	{"multi", func(e *Env, n int) future.Future[string] { return gen(multiAsync(e, n)) },
		func(e *Env, n int) string { return show(multiRef(e, n)) }},
	{"perIteration", func(e *Env, n int) future.Future[string] { return gen(perIterationAsync(e, n)) },
		func(e *Env, n int) string { return show(perIterationRef(e, n), nil) }},
	{"switches", func(e *Env, n int) future.Future[string] { return gen(switchesAsync(e, n)) },
		func(e *Env, n int) string { return show(switchesRef(e, n)) }},
	{"switchAwait", func(e *Env, n int) future.Future[string] { return gen(switchAwaitAsync(e, n)) },
		func(e *Env, n int) string { return show(switchAwaitRef(e, n)) }},
	{"opAssignAndReturn", func(e *Env, n int) future.Future[string] { return gen(opAssignAndReturnAsync(e, n)) },
		func(e *Env, n int) string { return show(opAssignAndReturnRef(e, n), nil) }},
	{"labels", func(e *Env, n int) future.Future[string] { return gen(labelsAsync(e, n)) },
		func(e *Env, n int) string { return show(labelsRef(e, n), nil) }},
	{"typeSwitch", func(e *Env, n int) future.Future[string] { return gen(typeSwitchAsync(e, n)) },
		func(e *Env, n int) string { return show(typeSwitchRef(e, n)) }},
	{"rangeInt", func(e *Env, n int) future.Future[string] { return gen(rangeIntAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeIntRef(e, n), nil) }},
	{"rangeSlice", func(e *Env, n int) future.Future[string] { return gen(rangeSliceAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeSliceRef(e, n), nil) }},
	{"rangeString", func(e *Env, n int) future.Future[string] { return gen(rangeStringAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeStringRef(e, n)) }},
	{"rangeArray", func(e *Env, n int) future.Future[string] { return gen(rangeArrayAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeArrayRef(e, n), nil) }},
	{"defers", func(e *Env, n int) future.Future[string] { return gen(defersAsync(e, n)) },
		func(e *Env, n int) string { return show(defersRef(e, n)) }},
	{"deferPanics", func(e *Env, n int) future.Future[string] { return gen(deferPanicsAsync(e, n)) },
		func(e *Env, n int) string { return show(deferPanicsRef(e, n), nil) }},
	{"deferForms", func(e *Env, n int) future.Future[string] { return gen(deferFormsAsync(e, n)) },
		func(e *Env, n int) string { deferFormsRef(e, n); return show(struct{}{}, nil) }},
	{"defersOpen", func(e *Env, n int) future.Future[string] { return gen(defersOpenAsync(e, n)) },
		func(e *Env, n int) string { return show(defersOpenRef(e, n)) }},
	{"defersPromoted", func(e *Env, n int) future.Future[string] { return gen(defersPromotedAsync(e, n)) },
		func(e *Env, n int) string { return show(defersPromotedRef(e, n), nil) }},
	{"defersClause", func(e *Env, n int) future.Future[string] { return gen(defersClauseAsync(e, n)) },
		func(e *Env, n int) string { return show(defersClauseRef(e, n), nil) }},
	{"defersGeneric", func(e *Env, n int) future.Future[string] {
		return gen(defersGenericAsync(e, tagged(fmt.Sprint("x", n)), []int{n}, n))
	}, func(e *Env, n int) string {
		return show(defersGenericRef(e, tagged(fmt.Sprint("x", n)), []int{n}, n), nil)
	}},
	{"deferPackageVar", func(e *Env, n int) future.Future[string] { return gen(deferPackageVarAsync(e, n)) },
		func(e *Env, n int) string { return show(deferPackageVarRef(e, n), nil) }},
	{"deferPackageVarLoop", func(e *Env, n int) future.Future[string] { return gen(deferPackageVarLoopAsync(e, n)) },
		func(e *Env, n int) string { return show(deferPackageVarLoopRef(e, n), nil) }},
	{"defersNine", func(e *Env, n int) future.Future[string] { return gen(defersNineAsync(e, n)) },
		func(e *Env, n int) string { return show(defersNineRef(e, n), nil) }},
	{"pointerMethod", func(e *Env, n int) future.Future[string] {
		s := &stack{e: e, items: []int{-1}}
		return future.Map(s.pushAllAsync(n), func(v int) string { return fmt.Sprint(v, s.items) })
	}, func(e *Env, n int) string {
		s := &stack{e: e, items: []int{-1}}
		v := s.pushAllRef(n)
		return fmt.Sprint(v, s.items)
	}},
	{"valueMethod", func(e *Env, n int) future.Future[string] {
		s := stack{e: e, items: []int{1, 2}}
		f := s.sumCopyAsync(n)   // copies s
		s.items = []int{100, 99} // after the call: not seen
		return future.Map(gen(f), func(v string) string { return fmt.Sprint(v, s.items) })
	}, func(e *Env, n int) string {
		s := stack{e: e, items: []int{1, 2}}
		v := show(s.sumCopyRef(n))
		s.items = []int{100, 99}
		return fmt.Sprint(v, s.items)
	}},
	{"unnamedReceiver", func(e *Env, n int) future.Future[string] { return gen((*stack)(nil).unnamedAsync(e, n)) },
		func(e *Env, n int) string { return show((*stack)(nil).unnamedRef(e, n), nil) }},
	{"generic", func(e *Env, n int) future.Future[string] {
		return gen(collectAsync(e, strings.Split("abcab"[:n%6], ""), func(s string) string { return s + s }))
	}, func(e *Env, n int) string {
		return show(collectRef(e, strings.Split("abcab"[:n%6], ""), func(s string) string { return s + s }))
	}},
	{"genericMethod", func(e *Env, n int) future.Future[string] {
		b := &box[float64]{e: e}
		return future.Map(b.fillAsync(n, func(i int) float64 { return float64(i) / 2 }), func(v float64) string { return fmt.Sprint(v, b.v) })
	}, func(e *Env, n int) string {
		b := &box[float64]{e: e}
		v := b.fillRef(n, func(i int) float64 { return float64(i) / 2 })
		return fmt.Sprint(v, b.v)
	}},
	{"genericString", func(e *Env, n int) future.Future[string] { return gen(runesAsync(e, word("héllo\xff"[n%4:]))) },
		func(e *Env, n int) string { return show(runesRef(e, word("héllo\xff"[n%4:]))) }},
	{"namedResults", func(e *Env, n int) future.Future[string] { return gen(namedResultsAsync(e, n)) },
		func(e *Env, n int) string { return show(namedResultsRef(e, n)) }},
	{"namedOne", func(e *Env, n int) future.Future[string] { return gen(namedOneAsync(e, n)) },
		func(e *Env, n int) string { return show(namedOneRef(e, n), nil) }},
	{"blankResult", func(e *Env, n int) future.Future[string] { return gen(blankResultAsync(e, n)) },
		func(e *Env, n int) string { return show(blankResultRef(e, n)) }},
	{"captures", func(e *Env, n int) future.Future[string] { return gen(capturesAsync(e, n)) },
		func(e *Env, n int) string { return show(capturesRef(e, n), nil) }},
	{"cellForms", func(e *Env, n int) future.Future[string] { return gen(cellFormsAsync(e, n)) },
		func(e *Env, n int) string { return show(cellFormsRef(e, n)) }},
	{"nestedExprs", func(e *Env, n int) future.Future[string] { return gen(nestedExprsAsync(e, n)) },
		func(e *Env, n int) string { return show(nestedExprsRef(e, n)) }},
	{"nestedTry", func(e *Env, n int) future.Future[string] { return gen(nestedTryAsync(e, n)) },
		func(e *Env, n int) string { return show(nestedTryRef(e, n), nil) }},
	{"genericMethodDefer", func(e *Env, n int) future.Future[string] {
		b := &box[string]{e: e, v: []string{"a", "b", "c", "d", "e"}}
		return gen(b.drainAsync(n, strings.ToUpper))
	}, func(e *Env, n int) string {
		b := &box[string]{e: e, v: []string{"a", "b", "c", "d", "e"}}
		return show(b.drainRef(n, strings.ToUpper))
	}},
	{"loopAwaits", func(e *Env, n int) future.Future[string] { return gen(loopAwaitsAsync(e, n)) },
		func(e *Env, n int) string { return show(loopAwaitsRef(e, n), nil) }},
	{"typeSwitchGuard", func(e *Env, n int) future.Future[string] { return gen(typeSwitchGuardAsync(e, n)) },
		func(e *Env, n int) string { return show(typeSwitchGuardRef(e, n)) }},
	{"caseAwaits", func(e *Env, n int) future.Future[string] { return gen(caseAwaitsAsync(e, n)) },
		func(e *Env, n int) string { return show(caseAwaitsRef(e, n)) }},
	{"deferAwaits", func(e *Env, n int) future.Future[string] { return gen(deferAwaitsAsync(e, n)) },
		func(e *Env, n int) string { return show(deferAwaitsRef(e, n), nil) }},
	{"litInInit", func(e *Env, n int) future.Future[string] { return gen(litInInitAsync(e, n)) },
		func(e *Env, n int) string { return show(litInInitRef(e, n), nil) }},
	{"blocks", func(e *Env, n int) future.Future[string] { return gen(blocksAsync(e, n)) },
		func(e *Env, n int) string { return show(blocksRef(e, n), nil) }},
	{"sends", func(e *Env, n int) future.Future[string] { return gen(sendsAsync(e, n)) },
		func(e *Env, n int) string { return show(sendsRef(e, n), nil) }},
	{"shadowFuture", func(e *Env, n int) future.Future[string] { return gen(shadowFutureAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowFutureRef(e, n)) }},
	{"shadowNew", func(e *Env, n int) future.Future[string] { return gen(shadowNewAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowNewRef(e, n), nil) }},
	{"shadowNewGeneric", func(e *Env, n int) future.Future[string] { return gen(shadowNewGenericAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowNewGenericRef(e, n), nil) }},
	{"shadowTrue", func(e *Env, n int) future.Future[string] { return gen(shadowTrueAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowTrueRef(e, n), nil) }},
	{"shadowType", func(e *Env, n int) future.Future[string] { return gen(shadowTypeAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowTypeRef(e, n), nil) }},
	{"shadowInPlainLoop", func(e *Env, n int) future.Future[string] { return gen(shadowInPlainLoopAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowInPlainLoopRef(e, n), nil) }},
	{"rangeArrayCall", func(e *Env, n int) future.Future[string] { return gen(rangeArrayCallAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeArrayCallRef(e, n), nil) }},
	{"rangeArrayPointer", func(e *Env, n int) future.Future[string] { return gen(rangeArrayPointerAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeArrayPointerRef(e, n), nil) }},
	{"tries", func(e *Env, n int) future.Future[string] { return gen(triesAsync(e, n)) },
		func(e *Env, n int) string { return show(triesRef(e, n)) }},
	{"tryReturn", func(e *Env, n int) future.Future[string] { return gen(tryReturnAsync(e, n)) },
		func(e *Env, n int) string { return show(tryReturnRef(e, n)) }},
	{"rangeDirect", func(e *Env, n int) future.Future[string] { return gen(rangeDirectAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeDirectRef(e, n), nil) }},
	{"pollLocals", func(e *Env, n int) future.Future[string] { return gen(pollLocalsAsync(e, n)) },
		func(e *Env, n int) string { return show(pollLocalsRef(e, n), nil) }},
	{"addrAwaitNames", func(e *Env, n int) future.Future[string] { return gen(addrAwaitNamesAsync(e, n)) },
		func(e *Env, n int) string { return show(addrAwaitNamesRef(e, n), nil) }},
	{"addrAwaitReassigned", func(e *Env, n int) future.Future[string] { return gen(addrAwaitReassignedAsync(e, n)) },
		func(e *Env, n int) string { return show(addrAwaitReassignedRef(e, n), nil) }},
	{"rangeArrayLater", func(e *Env, n int) future.Future[string] { return gen(rangeArrayLaterAsync(e, n)) },
		func(e *Env, n int) string { return show(rangeArrayLaterRef(e, n), nil) }},
	{"addrAwait", func(e *Env, n int) future.Future[string] { return gen(addrAwaitAsync(e, n)) },
		func(e *Env, n int) string { return show(addrAwaitRef(e, n)) }},
	{"addrAwaitLoop", func(e *Env, n int) future.Future[string] { return gen(addrAwaitLoopAsync(e, n)) },
		func(e *Env, n int) string { return show(addrAwaitLoopRef(e, n), nil) }},
	{"shadowTypeInLoop", func(e *Env, n int) future.Future[string] { return gen(shadowTypeInLoopAsync(e, n)) },
		func(e *Env, n int) string { return show(shadowTypeInLoopRef(e, n)) }},
	{"litInAwait", func(e *Env, n int) future.Future[string] { return gen(litInAwaitAsync(e, n)) },
		func(e *Env, n int) string { return show(litInAwaitRef(e, n), nil) }},
	{"movedAwait", func(e *Env, n int) future.Future[string] { return gen(movedAwaitAsync(e, n)) },
		func(e *Env, n int) string { return show(movedAwaitRef(e, n)) }},
	{"addrAwaitShared", func(e *Env, n int) future.Future[string] { return gen(addrAwaitSharedAsync(e, n)) },
		func(e *Env, n int) string { return show(addrAwaitSharedRef(e, n), nil) }},
}

func seeds(t *testing.T) int {
	if testing.Short() {
		return 20
	}
	return 200
}

// TestGeneratedMatchesReference runs every function generated and as its
// reference for arguments 0..8 over many seeds: same result, same log, and
// every future made was completed.
func TestGeneratedMatchesReference(t *testing.T) {
	runs := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A watchdog: a generated future that stays pending without a
			// wake would block forever; Block cancels it and reports.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for n := range 9 {
				for seed := range uint64(seeds(t)) {
					eg, er := NewEnv(seed), NewEnv(seed)
					got := outcome(func() string {
						v, err := future.Block(ctx, c.gen(eg, n))
						if err != nil {
							t.Fatalf("n=%d seed=%d: the generated future did not complete: %v", n, seed, err)
						}
						return v
					})
					want := outcome(func() string { return c.ref(er, n) })
					if got != want || !slices.Equal(eg.Log, er.Log) {
						t.Fatalf("n=%d seed=%d: generated %q, log %q; reference %q, log %q", n, seed, got, eg.Log, want, er.Log)
					}
					if eg.Live != 0 || eg.Cancelled != 0 {
						t.Fatalf("n=%d seed=%d: %d futures left pending, %d cancelled", n, seed, eg.Live, eg.Cancelled)
					}
					runs++
				}
			}
		})
	}
	t.Logf("%d functions x 9 arguments x %d seeds: %d runs", len(cases), seeds(t), runs)
}

// TestCancelAtEveryAwait polls each generated function k times and cancels
// it, for every k up to its completion: the future in flight is cancelled
// (no future made stays pending); the log is the reference's cancelled at
// the same await (the awaits before it ran, then exactly the deferred calls
// due, in Go's order); and a poll after Cancel panics with
// future.ErrPolledAfterCancel.
func TestCancelAtEveryAwait(t *testing.T) {
	cx := future.NewContext(waker.Noop())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for n := range 9 {
				for seed := range uint64(seeds(t)) {
					for k := 0; ; k++ {
						e := NewEnv(seed)
						f := c.gen(e, n)
						done := false
						for range k {
							if p := catch(func() { _, done = f.Poll(cx) }); p != nil {
								done = true // it panicked: the equivalence test compares that
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
							t.Fatalf("n=%d seed=%d k=%d: %d futures left pending after Cancel", n, seed, k, e.Live)
						}
						// The reference, cancelled at the await the generated
						// function waits at (the last future it made).
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
							t.Fatalf("n=%d seed=%d k=%d: cancelled: panic %v, log %q; reference cancelled at await %d: panic %v, log %q, %d pending",
								n, seed, k, got, e.Log, e.Made, want, ref.Log, ref.Live)
						}
						checkPanics(t, func() { f.Poll(cx) }, future.ErrPolledAfterCancel)
					}
				}
			}
		})
	}
}

func checkPanics(t *testing.T, fn func(), want error) {
	t.Helper()
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, want) {
			t.Fatalf("panicked with %v, want %v", err, want)
		}
	}()
	fn()
}
