// Package reject holds one async function per construct the generator
// rejects; the test expects each message at its position.
package reject

import (
	"github.com/blitz-go/blitz/asyncgen/testdata/reject/hidden"
	"github.com/blitz-go/blitz/future"
)

func use(...any) {}

//blitz:async
func goStmt(f future.Future[int]) {
	go use()
	future.Await(f)
}

//blitz:async
func gotoStmt(f future.Future[int]) {
	future.Await(f)
	goto end
end:
}

//blitz:async
func selectStmt(f future.Future[int], c chan int) {
	future.Await(f)
	select {
	case <-c:
	default:
	}
}

//blitz:async
func deferRecover(f future.Future[int]) {
	defer func() { recover() }()
	future.Await(f)
}

//blitz:async
func rangeMap(f future.Future[int], m map[int]int) {
	for range m {
		future.Await(f)
	}
}

//blitz:async
func inClosure(f future.Future[int]) {
	g := func() int { return future.Await(f) }
	use(g)
}

type T struct{ x int }

//blitz:async
func localType(f future.Future[int]) {
	type local int
	future.Await(f)
	use(local(1))
}

//blitz:async
func threeResults(f future.Future[int]) (int, int, error) {
	future.Await(f)
	return 0, 0, nil
}

//blitz:async
func awaitValue(f future.Future[int]) {
	await := future.Await[int]
	await(f)
}

//blitz:async
func rangeChan(f future.Future[int], c chan int) {
	for range c {
		future.Await(f)
	}
}

//blitz:async
func rangeFunc(f future.Future[int], seq func(func(int) bool)) {
	for range seq {
		future.Await(f)
	}
}

//blitz:async
func tryToField(f future.Future[future.Result[int]], t *T) error {
	var err error
	t.x, err = future.Try(f)
	return err
}

//blitz:async
func tryNested(f future.Future[future.Result[int]]) {
	use(future.Try(f))
}

//blitz:async
func tryValue(f future.Future[future.Result[int]]) {
	try := future.Try[int]
	use(try(f))
}

func recovers() { recover() }

func (t *T) recovers() { _ = recover() }

//blitz:async
func deferRecoverFunc(f future.Future[int], t *T) {
	defer recovers()
	defer t.recovers()
	future.Await(f)
	defer future.Await(f)
}

type pairOf[A, _ any] struct{ a A }

//blitz:async
func (p pairOf[A, _]) blankTypeParam(f future.Future[A]) A {
	return future.Await(f)
}

//blitz:async
func shortCircuitTry(f future.Future[future.Result[int]], ok bool) {
	if ok && use2(future.Try(f)) {
		use()
	}
}

func use2(int, error) bool { return true }

//blitz:async
func deferAwaitInLiteral(f future.Future[int]) {
	defer func() { future.Await(f) }()
}

//blitz:async
func rangeKeyAwait(f future.Future[int], a []int) {
	for a[future.Await(f)] = range 3 {
	}
}

//blitz:async
func shadowInPlainLoop(f future.Future[int]) int {
	n := future.Await(f)
	for i := 0; i < 3; i++ {
		true := i > 1
		if true {
			return i // return i, true would return the local
		}
	}
	return n
}

//blitz:async
func shadowInTypeSwitch(f future.Future[int]) int {
	x := future.Await(f)
	var a any = x
	switch len := a.(type) {
	case int:
		return len
	}
	return x
}

//blitz:async
func unexportedType(f future.Future[int]) int {
	s := hidden.New()
	n := future.Await(f)
	return n + s.Value()
}

//blitz:async
func callsDirectly(f future.Future[int]) int {
	n := future.Await(f)
	return n + unexportedType(f) // the direct-style function: its awaits panic
}

// notAsync calls an async function as written too.
func notAsync(f future.Future[int]) int { return callsDirectly(f) }

//blitz:async
func recoversElsewhere(f future.Future[int], c hidden.Closer) (n int, err error) {
	defer hidden.Recover(&err)
	defer c.Close()
	return future.Await(f), nil
}

//blitz:async
func cxMisused(f future.Future[int]) int {
	get := future.Cx // a value: not replaced
	_ = get
	defer func() {
		_ = future.Cx() // may run from Cancel, outside a poll
	}()
	return future.Await(f)
}

//blitz:async
func selectMixed(f future.Future[int], c chan int) int {
	select {
	case v := <-future.On(f):
		return v
	case v := <-c: // a Go channel among futures
		return v
	}
}

//blitz:async
func selectTwoValues(f future.Future[int]) int {
	select {
	case v, ok := <-future.On(f):
		_ = ok
		return v
	}
}

//blitz:async
func selectLongOperand(f func(int, int) future.Future[int]) int {
	select {
	case v := <-future.On(f(1,
		2)):
		return v
	}
}

//blitz:async
func markerOutsideSelect(f future.Future[int]) int {
	c := future.On(f) // not a case of a select
	_ = c
	return future.Await(f)
}

//blitz:async
func literalOfValue(fn func() int) int {
	return future.Await(future.Async(fn))
}

//blitz:async
func literalInPlainLiteral(f future.Future[int]) {
	run := func() future.Future[int] {
		return future.Async(func() int { return future.Await(f) })
	}
	future.Await(run())
}

//blitz:async
func literalCapturesHidden(f future.Future[int]) int {
	s := hidden.New()
	return future.Await(future.Async(func() int { return future.Await(f) + s.Value() }))
}

func literalOutsideAsync(f future.Future[int]) future.Future[int] {
	return future.Async(func() int { return future.Await(f) })
}

type box[T any] struct{ v T }

//blitz:async
func (b *box[_]) literalInGenericMethod(f future.Future[int]) int {
	future.Await(future.AsyncDo(func() { future.Await(f) }))
	return 1
}

//blitz:async
func eachOutsideRange(next func() future.Future[future.Result[int]]) int {
	s := future.Each(next) // not the range expression of a for statement
	_ = s
	return 0
}

// valueStream is a stream with a value receiver.
type valueStream struct{ n int }

func (s valueStream) next() future.Future[future.Result[int]] {
	return future.Ready(future.Result[int]{Value: s.n})
}

func (s *valueStream) bump() { s.n++ }

//blitz:async
func eachValueReceiver() int {
	var s valueStream
	t := 0
	for v := range future.Each(s.next) {
		t += v
		s.bump()
	}
	return t
}
