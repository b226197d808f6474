// Package timerdriver is the runtime's time: the sharded timer wheels in
// which the sleeps of the runtime's tasks wait, and the driver that every
// worker runs to fire them.
//
// It owns the wheels (one shard per worker, each under its own mutex, all
// counting ticks of one timerwheel.Timebase), the per-worker scratch of
// Wakers to wake, the wake-up deadline published to the parked workers
// (wakeAt), the lower bound of the current tick (LastNow) and the
// statistics of what fired (FiredStats, Pending). It does not own the
// sleeps: a SleepState lives by value in its future (package blitz's
// SleepFuture, which Timeout and Interval embed), and Arm and Disarm put it
// in and out of a wheel.
//
// # Callers
//
// Package blitz makes one Driver per runtime (New), hands it to the
// scheduler as its scheduler.Driver (alone, or with the I/O driver), sets
// its notify function (SetNotify) before the scheduler starts, and marks the
// shutdown's start (Close). A task polling a sleep calls DeadlineTick,
// LastNow, Never, Arm and Disarm; the workers call Maintain at each tick and
// before they park; Metrics and Stats read FiredStats and Pending.
//
// # Protocol
//
// A sleep inserts into a shard chosen by its address, so that the same
// sleep always finds its shard again, and sleeps of different tasks rarely
// share a lock. Every worker runs Maintain at each tick and before it parks:
// it fires the due entries of any shard whose lock it can take, wakes their
// Wakers outside the lock through the worker's Context (contain.Wake, so a
// woken task runs on the worker that fired it and a Waker's panic is
// contained), and returns the time to the next deadline, which becomes the
// worker's park timeout.
//
// No worker polls the clock while idle, so a sleep armed sooner than every
// parked worker's timeout must wake one. The rule, in two mirrored halves:
//
//  1. Arm stores its shard's next deadline, then loads wakeAt; if its
//     deadline is sooner, it stores wakeAt and calls notify.
//  2. Maintain stores wakeAt (the earliest deadline it saw), then loads the
//     shards' next deadlines again and wakes for a sooner one
//     (publishWakeAt).
//
// All four accesses are sequentially consistent, so an Arm racing a
// Maintain is seen by at least one of them: either the Arm loads the new
// wakeAt and notifies, or the Maintain's second look sees its deadline.
//
// A deadline at or past Never (math.MaxInt64 after the timebase's origin)
// is never armed: it costs no wheel entry and never fires.
package timerdriver
