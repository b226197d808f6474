package scheduler

import (
	"reflect"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
)

// This file answers "is the calling goroutine a worker?", which the
// blocking calls (JoinHandle.Wait, Shutdown, and the runtime's BlockOn) ask
// before they block, to refuse with ErrBlockingInTask instead of stalling a
// worker. See the package doc, "Blocking calls inside a task".
//
// Go has no goroutine-local storage and no goroutine id, so a worker cannot
// leave a mark where its own code finds it. What it has is its stack: every
// worker goroutine starts in runWorker, so runWorker is one of the
// outermost frames of any code running on a worker, however deep. OnWorker
// walks the caller's stack (runtime.Callers, no symbolization) and looks
// for runWorker's entry among the last few frames. The walk costs about a
// microsecond for a stack a few dozen frames deep, more for deeper ones;
// the callers pay it only when they are about to block, a slow path in
// itself. Rejected: reading the goroutine id out of runtime.Stack's text
// (ten times the cost, and a format nobody promises), pprof labels (not
// readable from the goroutine that set them), and a stack-address mark
// (goroutine stacks move when they grow).

// runWorker is the function every worker goroutine starts in, and the frame
// OnWorker looks for. It must stay a function of its own, never inlined.
//
//go:noinline
func runWorker(w *worker) {
	pprof.SetGoroutineLabels(w.labels) // a goroutine profile names the worker
	w.run()
}

// workerEntry is runWorker's entry PC. Set by init, immutable after.
var workerEntry uintptr

// init sets workerEntry (a function of its own: runWorker refers to
// workerEntry through run and noteWorkerReturn, which a variable's
// initializer may not).
func init() { workerEntry = reflect.ValueOf(runWorker).Pointer() }

// workerReturn is the return address of runWorker's call to run: the PC
// that runWorker's frame holds in the stack of every worker (run is never
// inlined, and runWorker calls it from one place). 0 until the first worker
// noted it (noteWorkerReturn); loaded by OnWorker, which then compares PCs
// instead of finding the function of each, a third of its cost.
var workerReturn atomic.Uintptr

// noteWorkerReturn notes workerReturn, from run's first moments: the frame
// above run's is runWorker's. It checks that the PC is in runWorker, so
// that a change to how run is called cannot make OnWorker false on a
// worker (it then keeps to the slower check). Called by run.
//
//go:noinline
func noteWorkerReturn() {
	var pc [1]uintptr
	// Skip runtime.Callers, noteWorkerReturn and run: pc[0] is the return
	// address in runWorker.
	if runtime.Callers(3, pc[:]) == 1 {
		if f := runtime.FuncForPC(pc[0] - 1); f != nil && f.Entry() == workerEntry {
			workerReturn.Store(pc[0]) // loaded by OnWorker
		}
	}
}

// outerFrames is how many of the outermost frames OnWorker checks:
// runtime.goexit, the go statement's wrapper, runWorker, and one to spare.
const outerFrames = 4

// OnWorker reports whether the calling goroutine is a worker of a Scheduler
// (of any): true inside a task's poll, or a Driver's call, and in a
// future's Cancel when a worker aborts a task; false on any other
// goroutine, including those a task starts, the shutdown's and the
// runtime's blocking-pool threads. It walks the
// caller's stack (see above), so it costs about a microsecond: callers ask
// it on their slow path only. Any goroutine may call it.
func OnWorker() bool {
	var buf [64]uintptr
	pcs := buf[:]
	n := runtime.Callers(2, pcs)
	for n == len(pcs) { // the stack may go on: the outermost frames are further
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(2, pcs)
	}
	outer := pcs[max(0, n-outerFrames):n]
	if ret := workerReturn.Load(); ret != 0 { // stored once by the first worker
		for _, pc := range outer {
			if pc == ret {
				return true
			}
		}
		return false
	}
	for _, pc := range outer {
		// pc is a return address; pc-1 is inside the calling function.
		if f := runtime.FuncForPC(pc - 1); f != nil && f.Entry() == workerEntry {
			return true
		}
	}
	return false
}
