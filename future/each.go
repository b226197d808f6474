package future

import "iter"

// Each marks, in an async function, a range loop over a stream of values
// received one future at a time, the way a goroutine ranges over a Go
// channel:
//
//	for j := range future.Each(jobs.Recv) {
//		...
//	}
//	// jobs is closed and drained
//
// Each pass calls next, awaits its future and runs the body with the
// value. The loop ends at the first receive that fails: for a channel of
// package channels, whose receive fails only once the channel is closed
// and drained, that is the channel's end, as for a Go channel. The error
// that ended the loop is not kept: for a stream whose receive can fail
// otherwise (a Broadcast receiver that lagged, a connection's reads), loop
// with future.Try, where the error is seen:
//
//	for {
//		m, err := future.Try(sub.Recv())
//		if err != nil {
//			...
//		}
//	}
//
// As in Go, next (a method value such as jobs.Recv binds its receiver) is
// evaluated once, before the first pass; break, continue and labels work
// as in any loop, and the loop's variable is a new one in each pass.
// Cancelling the async function while it waits in the loop cancels the
// pending receive (a channel's receive that is cancelled took nothing).
//
// Like Await, Each is a marker that the blitzgen generator compiles: it
// is written only as the range expression of a for statement in the body
// of an async function or an async literal. Really called, it panics with
// an error that is ErrAwaitOutsideGenerated.
func Each[T any, F Future[Result[T]]](next func() F) iter.Seq[T] {
	_ = next
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	return nil
}
