package progfuzzrun

import "github.com/blitz-go/blitz/future"

// A range over future.Each with = (an existing variable as the key): the
// error that ends the stream must not assign its zero value to the key,
// which keeps the last value received, as Go's range does (the rewrite
// once assigned it with the error: 0 where Go leaves 12).

//blitz:async
func eachassignkeeps(e *Env, n int) int {
	last := future.Await(e.Val(n))
	e.Note("last=%d", last)
	next := e.Stream(n%4 + 1)
	for last = range future.Each(next) {
		e.Note("last=%d", last)
		if last > 20 {
			break
		}
	}
	for last = range future.Each(e.Stream(n % 3)) {
		e.Note("again last=%d", last)
	}
	return last
}
