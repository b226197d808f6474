package future

// Async marks, in an async function, a function literal that is itself
// async: its body may await, and the call is the future of the literal's
// body, which runs when the future is polled (spawn it, or await it).
//
//	for range workers {
//		set.Spawn(future.Cx(), future.Async(func() int {
//			n := 0
//			for {
//				if _, err := future.Try(jobs.Recv()); err != nil {
//					return n
//				}
//				n++
//			}
//		}))
//	}
//
// The literal captures the variables it names as any Go closure does, by
// reference: writes on either side are seen by the other, and a loop's
// per-iteration variable is that iteration's. The blitzgen generator turns
// the literal into a state machine of its own, which holds a pointer to
// each variable it captures. The literal takes no parameters; it may have
// named results, defers and recover, like any async function.
//
// It is written as the argument of the call, in the body of an async
// function or of another async literal, not inside a plain function
// literal. Like Await, it is replaced by the generator; if it is really
// called it panics with an error that is ErrAwaitOutsideGenerated.
func Async[T any](fn func() T) Future[T] {
	_ = fn
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	return nil
}

// AsyncFallible is Async for a literal whose results are (T, error): its
// future's value is a Result[T], which future.Try unpacks.
func AsyncFallible[T any](fn func() (T, error)) Future[Result[T]] {
	_ = fn
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	return nil
}

// AsyncDo is Async for a literal without results: its future's value is
// struct{}.
func AsyncDo(fn func()) Future[struct{}] {
	_ = fn
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	return nil
}
