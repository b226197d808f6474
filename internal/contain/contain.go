package contain

import (
	"log"
	"runtime/debug"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// Where a contained Waker panic happened, for its report.
const (
	OfIODriver     = "a waker called by the I/O driver"
	OfTimerDriver  = "a waker called by the timer driver"
	OfBlockingPool = "a waker called by the blocking pool"
	OfFileClose    = "a waker called when a file's last operation ended"
	OfResolver     = "a waker called by a name lookup"
)

// Wake wakes wk through cx, as a driver delivering an event does,
// containing a panic of the Waker: the panic is reported (Report) and Wake
// returns normally, so that the driver goes on with the rest of its batch
// and the worker survives. The driver must have stored the event before the
// call (the Waker's task polls again to find it), and hold no lock. where
// names the driver for the report. Called by a driver with the Context of
// the worker (or shutdown) delivering the event.
func Wake(cx *future.Context, wk waker.Waker, where string) {
	defer func() {
		if r := recover(); r != nil {
			s, _ := cx.Executor().(*scheduler.Scheduler)
			Report(s, where, r)
		}
	}()
	cx.Wake(wk)
}

// WakeReported is Wake for a goroutine of the runtime's that has no
// Context (a blocking-pool thread, a name lookup, the last operation of a
// closing file): it calls wk.Wake directly and reports a panic through s
// (nil: the log). The caller must have stored the outcome first and hold no
// lock. Any goroutine.
func WakeReported(s *scheduler.Scheduler, wk waker.Waker, where string) {
	defer func() {
		if r := recover(); r != nil {
			Report(s, where, r)
		}
	}()
	wk.Wake()
}

// Report reports r, a Waker's panic that Wake or WakeReported recovered,
// through s (Scheduler.ReportPanic: counted, then blitz.Config.OnPanic or the
// log); with no scheduler, to the log. Called by their deferred functions,
// on the panicking goroutine, so that the stack is the panic's.
func Report(s *scheduler.Scheduler, where string, r any) {
	pe := &scheduler.PanicError{Value: r, Stack: debug.Stack()}
	if s != nil {
		s.ReportPanic(where, pe)
		return
	}
	log.Printf("blitz: panic in %s, recovered: %v\n\n%s", where, pe.Value, pe.Stack)
}
