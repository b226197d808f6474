// Package asyncbench measures what an async function compiled by blitzgen
// costs against the same computation written by hand as a future, and
// against a goroutine: the bytes an idle task holds and the time and
// allocations of one await.
//
// Each computation exists in several forms. funcs.go holds it as an async
// function in direct style (compiled into funcs_async.go by go generate),
// hand.go as the state machine an expert writes with the runtime's API (a
// state enum, the awaited futures embedded by value, fields for what lives
// across an await), goroutine.go as blocking code for a goroutine, and
// proposed_test.go as the generated code edited the way the generator could
// emit it; handleClosing, handle with a deferred Close of its connection,
// measures what a defer adds to a generated handler. The tests check that
// all of them compute the same thing before the benchmarks time them; the
// tests run the idle measurements at a smoke size, and the benchmarks run
// only under -bench.
//
// The leaf futures (conn.go) are ready at their second poll: the first wakes
// the task and returns not ready, as a read whose data arrives at once does,
// so every await suspends the task and resumes it through the scheduler.
package asyncbench
