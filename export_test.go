package blitz

import (
	"os"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// OpFuture submits one backend op through the runtime polling it and
// completes with its final completion: the tests' way to drive the I/O
// driver below the networking API.
type OpFuture struct {
	io        ioOp
	submitted bool
}

// NewOpFuture returns a future that submits op on its first poll.
func NewOpFuture(op backend.Op) *OpFuture {
	f := &OpFuture{}
	f.io.op = op
	return f
}

// Poll submits on the first poll, then waits for the completion.
func (f *OpFuture) Poll(cx *future.Context) (backend.Completion, bool) {
	if !f.submitted {
		h, ok := Current(cx)
		if !ok || h.rt.io == nil {
			return backend.Completion{Err: backend.ErrUnsupported}, true
		}
		f.submitted = true
		if err := f.io.submit(cx, h.rt.io.RingOf(cx.Worker())); err != nil {
			return backend.Completion{Err: err}, true
		}
	}
	return f.io.poll(cx)
}

// Cancel abandons the op.
func (f *OpFuture) Cancel() { f.io.abandon() }

// IOErrors returns the driver's count of unexpected Wait errors.
func (rt *Runtime) IOErrors() uint64 {
	if rt.io == nil {
		return 0
	}
	return rt.io.WaitErrors()
}

// SignalListeners returns the number of listeners registered with the
// signal dispatcher and the number of signals it holds an os/signal channel
// for.
func SignalListeners() (listeners, signals int) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	return hub.listeners, len(hub.entries)
}

// SignalDispatcherRunning reports whether the dispatcher goroutine runs.
func SignalDispatcherRunning() bool {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	return hub.running
}

// InjectSignal dispatches sig as if os/signal had delivered it, and reports
// whether some listener listens for it: the tests' way to make a burst
// that the kernel would coalesce.
func InjectSignal(sig os.Signal) bool {
	hub.mu.Lock()
	e := hub.entries[sig]
	hub.mu.Unlock()
	if e == nil {
		return false
	}
	hub.dispatch(e, sig)
	return true
}

// PidfdWaits returns how many child waits have completed through a pidfd
// polled by the I/O backend (the process wait's Linux path).
func PidfdWaits() uint64 { return pidfdWaits.Load() }
