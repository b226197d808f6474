package golden

import "github.com/blitz-go/blitz/future"

// Every name the generated code would like to use is taken by the user.
//
//blitz:async
func names(f future.Future[int], v int) int {
	ready, cx, poll, state, err := 1, 2, 3, 4, 5
	x := future.Await(f)
	for i := 0; i < x; i++ {
		aw1 := future.Await(f)
		state += aw1 + i
	}
	return ready + cx + poll + state + err + v + x
}

//blitz:async
func noAwait(n int) string {
	if n > 0 {
		return "positive"
	}
	return "not"
}
