// Package asyncbench measures what an async function compiled by blitzgen
// costs against the same computation written by hand as a future, and
// against a goroutine: the bytes an idle task holds and the time and
// allocations of one await.
//
// Each computation exists three times. funcs.go holds it as an async
// function in direct style (compiled into funcs_async.go by go generate),
// hand.go as the state machine an expert writes with the runtime's API (a
// state enum, the awaited futures embedded by value, fields for what lives
// across an await), and goroutine.go as blocking code for a goroutine. The
// tests check that all three compute the same thing before the benchmarks
// time them; the benchmarks run at a smoke size unless -bench asks for them.
//
// The leaf futures (conn.go) are ready at their second poll: the first wakes
// the task and returns not ready, as a read whose data arrives at once does,
// so every await suspends the task and resumes it through the scheduler.
package asyncbench
