package blocking

// This file fixes the package's public API (other modules are written
// against it); pool.go implements it.

import (
	"errors"
	"time"
)

// Defaults of Config.
const (
	DefaultMaxThreads  = 512
	DefaultIdleTimeout = 10 * time.Second
)

// Errors.
var (
	// ErrClosed is returned by Submit after Shutdown began, and passed to
	// the Reject of tasks that Shutdown removed from the queue.
	ErrClosed = errors.New("blocking: pool closed")
	// ErrConfig is wrapped by New's errors about its Config.
	ErrConfig = errors.New("blocking: invalid config")
	// ErrNilTask is returned by Submit for a nil task or one without Run.
	ErrNilTask = errors.New("blocking: nil task")
	// ErrQueued is returned by Submit for a task already submitted whose
	// Run or Reject has not been called yet: queued, or handed to a worker
	// that has not started it (a Task is submitted once at a time). A Task
	// whose Run is executing may be submitted again.
	ErrQueued = errors.New("blocking: task already submitted")
)

// Config shapes a Pool. The zero value is the default.
type Config struct {
	// MaxThreads caps the workers (goroutines that may block in system
	// calls, hence OS threads); 0 means DefaultMaxThreads.
	MaxThreads int
	// IdleTimeout is how long a worker waits for a task before it exits;
	// 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Task is one unit of blocking work and the pool's intrusive queue node:
// embed it in the record of the work (or allocate one), so that queueing
// allocates nothing beyond the task itself. The submitter owns the Task
// until Submit; the pool owns it from a successful Submit until it calls
// Run or Reject. From the moment one of them is called the pool does not
// touch the Task again, so the submitter may change and resubmit it, even
// from inside Run (the package doc, "Ownership of a Task").
type Task struct {
	// Run is the work.
	Run func()
	// Panicked, when set, receives the value and the stack of a panic of
	// Run, recovered on the worker, which lives on (counted in
	// Stats.Panics). When it is nil the panic is not recovered: it ends
	// the program, as a panicking goroutine's would.
	Panicked func(value any, stack []byte)
	// Reject, when set, is called instead of Run when Shutdown with
	// RejectQueued removes the task from the queue; err is ErrClosed.
	Reject func(err error)

	// next links the queue while the task is queued. Guarded by the
	// Pool.mu of the pool it was submitted to.
	next *Task
	// state is taskIdle, taskQueued or taskRunning (pool.go). Guarded by
	// the Pool.mu of the pool it was submitted to.
	state uint8
}

// Policy says what Shutdown does with tasks still queued.
type Policy uint8

const (
	// RunQueued runs every queued task before the workers exit.
	RunQueued Policy = iota
	// RejectQueued calls the queued tasks' Reject (or drops them, counting
	// them in the Report, when Reject is nil) and runs none of them.
	RejectQueued
)

// Stats are the pool's counters at one moment.
type Stats struct {
	Threads int    // workers alive (running a task or idle)
	Idle    int    // workers waiting for a task
	Pending int    // tasks queued, not yet started
	Started uint64 // workers started since New
	Ran     uint64 // tasks run to completion (panicked ones included)
	Panics  uint64 // tasks whose Run panicked
}

// Report is what Shutdown did.
type Report struct {
	Ran      int // queued tasks that Shutdown let run (RunQueued)
	Rejected int // queued tasks removed and rejected (RejectQueued)
}
