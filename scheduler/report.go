package scheduler

import (
	"errors"
	"log"
	"runtime/debug"
)

// This file is the one path by which a panic that no JoinHandle collects
// is reported. See the package doc, "Panics".

// ReportPanic reports pe, a panic that no JoinHandle will collect: it
// counts it in Stats.Panicked and hands it to Config.OnPanic, or, when
// OnPanic is nil, writes it with its stack to the standard logger
// (log.Printf), as Go prints an unrecovered panic, and the program goes on.
// where says what panicked, for the log line ("a detached task", "a waker
// called by the I/O driver").
//
// The scheduler reports this way the panic of a detached task and the panic
// of a future's Cancel that it called; a Driver that contains a panic of
// code it calls (the runtime's drivers, for a Waker that panics) reports it
// here too, so that every stray panic of the runtime takes one path. Any
// goroutine may call it; OnPanic then runs on that goroutine.
func (s *Scheduler) ReportPanic(where string, pe *PanicError) {
	s.panicked.Add(1)
	s.deliverPanic(where, pe)
}

// deliverPanic is ReportPanic without the count, for a task's own panic,
// which countFinish counted.
func (s *Scheduler) deliverPanic(where string, pe *PanicError) {
	if s.cfg.OnPanic != nil {
		s.cfg.OnPanic(pe)
		return
	}
	log.Printf("%s: panic in %s, recovered: %v\n\n%s", "scheduler", where, pe.Value, pe.Stack)
}

// recoverPanic converts r, a value recovered from a panic, into a
// *PanicError with the stack of the panicking goroutine (the caller's
// deferred function runs on it). A *PanicError carried over from another
// goroutine (the runtime's blocking pool re-raises a call's panic in its
// task) keeps the stack where it happened.
func recoverPanic(r any) *PanicError {
	if p, ok := r.(*PanicError); ok {
		return p
	}
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// panicOf returns the *PanicError that err is or wraps, or nil.
func panicOf(err error) *PanicError {
	var pe *PanicError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}
