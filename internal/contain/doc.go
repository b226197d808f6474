// Package contain wakes a task's Waker on behalf of a driver of the runtime
// (the I/O driver, the timer driver, the blocking pool, a name lookup, the
// close of a file) and contains a panic of that Waker: the panic is
// reported, and the driver goes on with the rest of its batch.
//
// # Protocol
//
// The driver stores the event first (the Waker's task polls again to find
// it), holds no lock, then calls Wake (with the Context of the worker, or
// shutdown, delivering the event) or WakeReported (from a goroutine of the
// runtime's that has no Context). A recovered panic is reported through the
// runtime's scheduler (scheduler.Scheduler.ReportPanic: counted, then
// Config.OnPanic or the log), or to the log when there is none.
//
// Crashing, as time.AfterFunc's goroutine would, was rejected: the Waker is
// the waiter's code, not the driver's, and one bad Waker would take every
// task of the process down.
//
// Callers: the root package blitz and the internal packages timerdriver and
// iodriver.
package contain
