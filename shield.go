package blitz

import (
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// Shield returns a future of f's value that a cancel of the task awaiting
// it does not interrupt: a section that must finish once started (a commit
// to disk, a reply already half written). A JoinHandle.Cancel, a JoinSet's
// CancelAll or Close, or the runtime's Shutdown requested while f runs
// takes effect when f completes, at the task's next suspension; the task
// then ends cancelled. A Shield first polled after the task's cancel
// (outside any other of its shields) does not start f, and the task ends
// there: a loop of shielded sections stops between two sections, never in
// one. Shields nest (up to 255 in one task; one more
// panics with ErrShieldDepth, which fails the task).
//
//	//blitz:async
//	func save(f *blitz.File, rec []byte) error {
//		_, err := future.Try(blitz.Shield(writeAndSyncAsync(f, rec))) // all of it, or none
//		return err
//	}
//
// Shutdown honours shields for as long as its context allows: it cancels
// the shielded tasks and runs the runtime on (timers, I/O, the other
// tasks) until their shields end, then stops as usual; the tasks still
// shielded when its context ends are cut, counted in
// Stats().ShieldsCut and named in the error Shutdown returns.
//
// A shield protects against the cancel of the task, not against the
// future that owns f: a Timeout, a select or a combinator that drops the
// shielded future cancels f as it would any future. Outside a task (the
// future of BlockOn, polled on its goroutine) Shield protects nothing.
func Shield[T any](f future.Future[T]) *ShieldFuture[T] { return scheduler.Shield(f) }

// ShieldFuture is Shield's future.
type ShieldFuture[T any] = scheduler.ShieldFuture[T]

// ErrShieldDepth is the panic of a Shield nested more than 255 deep in
// one task.
var ErrShieldDepth = scheduler.ErrShieldDepth
