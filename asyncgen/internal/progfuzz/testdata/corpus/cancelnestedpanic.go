package progfuzzrun

import "github.com/blitz-go/blitz/future"

// From seed 1033 (reduced). Cancelled while it awaits the helper, the
// program cancels the helper, whose deferred Boom panics (n%7 == 0): as
// when Go unwinds the reference, the panic must go on through the
// program's own deferred calls, which run ("outer deferred"). The
// generated Cancel once called future.Cancel(f.aw1) before f.runDefers(),
// so the panic skipped them.

//blitz:async
func cancelnestedpanich(e *Env, n int) int {
	defer Boom(e, n)
	return future.Await(e.Val(n))
}

//blitz:async
func cancelnestedpanic(e *Env, n int) int {
	future.Await(e.Val(n))
	defer e.Note("outer deferred")
	return future.Await(cancelnestedpanichAsync(e, n))
}
