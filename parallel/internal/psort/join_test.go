package psort

import "sync"

// ctx is the worker context of the test joins: it counts the depth of
// nested joins so that tests can check that contexts flow through.
type ctx struct{ depth int }

// seqJoin runs a then b on the calling goroutine.
func seqJoin(c ctx, a, b func(ctx)) {
	c.depth++
	a(c)
	b(c)
}

// goJoin runs b on a new goroutine and a on the caller's, so that the race
// detector sees real concurrency. Like the pool's join, it waits for both
// sides even if one panics, then re-panics (a's panic preferred).
func goJoin(c ctx, a, b func(ctx)) {
	c.depth++
	var wg sync.WaitGroup
	var bPanic any
	bPanicked := true
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			if bPanicked {
				bPanic = recover()
			}
		}()
		b(c)
		bPanicked = false
	}()
	func() {
		defer wg.Wait()
		a(c)
	}()
	if bPanicked {
		panic(bPanic)
	}
}

var testJoins = []struct {
	name string
	join Join[ctx]
}{
	{"seqJoin", seqJoin},
	{"goJoin", goJoin},
}
