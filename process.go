package blitz

// Child processes: the command builder, spawning, and the child whose wait
// and output are futures. See "Processes" in the package documentation; the
// pipes are in process_pipe.go, the pidfd wait in process_linux.go.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// Stdio says what a child's standard stream is connected to. The zero
// value is Inherit.
type Stdio uint8

const (
	// Inherit connects the stream to the parent's own (os.Stdin, os.Stdout,
	// os.Stderr). The default for all three streams, as in os/exec's
	// absence of redirection and in Tokio.
	Inherit Stdio = iota
	// Null connects the stream to the null device.
	Null
	// Piped connects the stream to a pipe whose other end the Child hands
	// out: Child.Stdin, Child.Stdout, Child.Stderr.
	Piped
)

// String returns "inherit", "null" or "piped".
func (s Stdio) String() string {
	switch s {
	case Inherit:
		return "inherit"
	case Null:
		return "null"
	case Piped:
		return "piped"
	}
	return fmt.Sprintf("Stdio(%d)", uint8(s))
}

// Cmd describes a process to start: a program, its arguments, environment,
// directory and standard streams. Its methods set a field and return the
// Cmd, for chaining; Spawn starts a process from a snapshot of it, so a Cmd
// may be changed and spawned again. A Cmd is not safe for concurrent use.
type Cmd struct {
	name     string
	args     []string
	env      []string // added to the inherited environment, or all of it with clearEnv
	clearEnv bool
	dir      string
	stdio    [3]Stdio // stdin, stdout, stderr
}

// Command returns a Cmd running the program name with args. A name without
// a path separator is looked up in PATH when the process is spawned, as by
// exec.Command.
func Command(name string, args ...string) *Cmd {
	return &Cmd{name: name, args: slices.Clone(args)}
}

// Arg appends arguments.
func (c *Cmd) Arg(args ...string) *Cmd {
	c.args = append(c.args, args...)
	return c
}

// Env adds environment variables, each "KEY=value", to the environment
// the child inherits (or to the empty one after ClearEnv). A later value of
// a key replaces an earlier one.
func (c *Cmd) Env(kv ...string) *Cmd {
	c.env = append(c.env, kv...)
	return c
}

// ClearEnv makes the child start from an empty environment instead of the
// parent's: only what Env adds, before or after the call, is passed.
func (c *Cmd) ClearEnv() *Cmd {
	c.clearEnv = true
	return c
}

// Dir sets the child's working directory; "" (the default) is the
// parent's.
func (c *Cmd) Dir(path string) *Cmd {
	c.dir = path
	return c
}

// Stdin sets what the child's standard input is connected to.
func (c *Cmd) Stdin(s Stdio) *Cmd { c.stdio[0] = s; return c }

// Stdout sets what the child's standard output is connected to.
func (c *Cmd) Stdout(s Stdio) *Cmd { c.stdio[1] = s; return c }

// Stderr sets what the child's standard error is connected to.
func (c *Cmd) Stderr(s Stdio) *Cmd { c.stdio[2] = s; return c }

// String returns the command line, for messages.
func (c *Cmd) String() string {
	return strings.Join(append([]string{c.name}, c.args...), " ")
}

// Spawn returns a future that starts the process on the blocking pool of
// the runtime polling it (fork and exec can take milliseconds in a large
// parent) and resolves to its Child. The Child's wait goes through h's I/O
// backend when it can (a pidfd on Linux). A program that cannot be found
// gives an error matching exec.ErrNotFound (looked up in PATH) or
// fs.ErrNotExist (a path). Cancelling the future kills and reaps a process
// that was started anyway, so none is left behind. The start runs on h's
// blocking pool whoever polls the future; once h's runtime has shut down,
// the future fails with an error wrapping ErrShutdown and starts nothing.
func (c *Cmd) Spawn(h Handle) *SpawnFuture {
	snap := *c
	snap.args = slices.Clone(c.args)
	snap.env = slices.Clone(c.env)
	f := &SpawnFuture{sh: &spawnShared{}}
	if h.Runtime().down.Load() {
		f.err = fmt.Errorf("blitz: spawn %s: %w", snap.name, ErrShutdown)
		return f
	}
	ring, _ := ringFor(h) // nil with BackendNone: waits use the pool
	f.blk = blockingOn(h.rt, func() (*Child, error) {
		child, err := snap.start(h.rt, ring)
		if err != nil {
			return nil, err
		}
		if !f.sh.hold(child) {
			child.discard()
			return nil, ErrCancelled
		}
		return child, nil
	})
	return f
}

// SpawnFuture is the future of Cmd.Spawn: its pointer is a
// future.Future[future.Result[*Child]] and a future.Canceler.
type SpawnFuture struct {
	// blk starts the process; nil when err is set.
	blk *BlockingFuture[*Child]
	sh  *spawnShared
	// err, if set, is the outcome of the first poll, without a start.
	err  error
	done bool
}

// spawnShared hands the Child from the pool goroutine that started it to
// the future, or, when the future was cancelled first, back for disposal.
type spawnShared struct {
	mu        sync.Mutex
	cancelled bool   // set by Cancel
	child     *Child // started, not yet taken by Poll
}

// hold records child for the future; false if the future was cancelled.
// Called by the pool goroutine that started child.
func (s *spawnShared) hold(child *Child) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelled {
		return false
	}
	s.child = child
	return true
}

// Poll starts the process at the first poll and returns its Child.
func (f *SpawnFuture) Poll(cx *future.Context) (future.Result[*Child], bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if f.err != nil {
		f.done = true
		return future.Fail[*Child](f.err), true
	}
	r, ok := f.blk.Poll(cx)
	if !ok {
		return r, false
	}
	f.done = true
	f.sh.mu.Lock()
	f.sh.child = nil
	f.sh.mu.Unlock()
	return r, true
}

// Cancel abandons the spawn; a process started meanwhile is killed and
// reaped in the background.
func (f *SpawnFuture) Cancel() {
	f.sh.mu.Lock()
	f.sh.cancelled = true
	child := f.sh.child
	f.sh.child = nil
	f.sh.mu.Unlock()
	if f.blk != nil {
		f.blk.Cancel()
	}
	if child != nil {
		child.discard()
	}
	f.done = true
}

// start builds the exec.Cmd, starts it and wraps it. ring is where the
// wait's pidfd is polled, nil for none. Runs on the blocking pool.
func (c *Cmd) start(rt *Runtime, ring *ioRing) (*Child, error) {
	cmd := exec.Command(c.name, c.args...)
	cmd.Dir = c.dir
	switch {
	case c.clearEnv:
		cmd.Env = append([]string{}, c.env...)
	case len(c.env) > 0:
		cmd.Env = append(os.Environ(), c.env...)
	}
	// Every stream is an *os.File (or nil for the null device), so os/exec
	// starts no copying goroutine and its Wait only reaps: it returns at
	// once after the pidfd said the child exited, and it never closes the
	// pipe ends the Child hands out.
	var childEnds, parentEnds []*os.File
	fail := func(err error) (*Child, error) {
		for _, f := range append(childEnds, parentEnds...) {
			_ = f.Close()
		}
		return nil, fmt.Errorf("blitz: spawn %s: %w", c.name, err)
	}
	inherit := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	var files [3]*os.File // what the child gets
	var piped [3]*os.File // the parent's ends
	for i, s := range c.stdio {
		switch s {
		case Inherit:
			files[i] = inherit[i]
		case Null:
		case Piped:
			r, w, err := os.Pipe()
			if err != nil {
				return fail(err)
			}
			if i == 0 {
				files[i], piped[i] = r, w
			} else {
				files[i], piped[i] = w, r
			}
			childEnds = append(childEnds, files[i])
			parentEnds = append(parentEnds, piped[i])
		default:
			return fail(fmt.Errorf("invalid %v", s))
		}
	}
	// Assign only non-nil files: a nil *os.File in the io.Reader would not
	// be nil.
	if files[0] != nil {
		cmd.Stdin = files[0]
	}
	if files[1] != nil {
		cmd.Stdout = files[1]
	}
	if files[2] != nil {
		cmd.Stderr = files[2]
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	for _, f := range childEnds {
		_ = f.Close()
	}
	child := &Child{cmd: cmd, pid: cmd.Process.Pid, name: c.name, pidfd: backend.InvalidFD}
	if piped[0] != nil {
		child.stdin = newChildStdin(piped[0], rt)
	}
	if piped[1] != nil {
		child.stdout = newChildOutput(piped[1], "stdout", rt)
	}
	if piped[2] != nil {
		child.stderr = newChildOutput(piped[2], "stderr", rt)
	}
	if ring != nil {
		if fd, ok := openPidfd(child.pid); ok {
			child.ring, child.pidfd = ring, fd
		}
	}
	return child, nil
}

// Child is a started process. Its pid stays valid (the process is not
// reaped) until a Wait, or an Output, has seen it exit: every Child must be
// waited for, as with os/exec, to release the process-table entry and, on
// Linux, the pidfd. Its methods are safe for concurrent use.
type Child struct {
	cmd  *exec.Cmd
	pid  int
	name string

	// stdin, stdout and stderr are the parent's pipe ends, nil unless
	// Piped. Immutable.
	stdin          *ChildStdin
	stdout, stderr *ChildOutput

	// ring is where the pidfd's polls and close go, nil without a pidfd.
	// Immutable.
	ring *ioRing

	// reapOnce makes the one call of cmd.Wait.
	reapOnce sync.Once

	// mu guards the fields below: pidfd is read by a WaitFuture to submit
	// its poll and invalidated by reap before it closes the descriptor, so
	// no poll is submitted on a closed (perhaps reused) number.
	mu     sync.Mutex
	pidfd  backend.FD // the child's pidfd, InvalidFD when none or closed
	reaped bool       // the outcome below is set
	status ExitStatus
	err    error
}

// pidfdWaits counts the waits completed through a pidfd polled by the
// backend (tests assert the path is taken).
var pidfdWaits atomic.Uint64

// Pid returns the child's process id.
func (c *Child) Pid() int { return c.pid }

// Stdin returns the writing end of the child's standard input, nil unless
// it is Piped.
func (c *Child) Stdin() *ChildStdin { return c.stdin }

// Stdout returns the reading end of the child's standard output, nil unless
// it is Piped.
func (c *Child) Stdout() *ChildOutput { return c.stdout }

// Stderr returns the reading end of the child's standard error, nil unless
// it is Piped.
func (c *Child) Stderr() *ChildOutput { return c.stderr }

// Kill kills the child: SIGKILL on Unix, TerminateProcess on Windows. It
// does not wait: Wait reports the outcome. Killing a child that has exited
// is not an error.
func (c *Child) Kill() error {
	c.mu.Lock()
	reaped := c.reaped
	c.mu.Unlock()
	if reaped {
		return nil
	}
	err := c.cmd.Process.Kill()
	if err == nil || errors.Is(err, os.ErrProcessDone) || killFoundExited(err) {
		return nil
	}
	return fmt.Errorf("blitz: kill process %d (%s): %w", c.pid, c.name, err)
}

// Wait returns a future of the child's exit status. It first closes the
// child's piped stdin, if any (as Tokio does, so that a child reading its
// input to the end does not wait for the parent while the parent waits for
// it; writes already made are delivered first). An exit status that is not
// success is not an error; the error is for a failure to wait. Waiting
// again, or concurrently, gives the same status.
//
// On Linux with an I/O backend the future polls a pidfd of the child
// through the backend, so no thread waits; elsewhere (other systems,
// BackendNone, a kernel without pidfd_open) the wait runs on the blocking
// pool.
func (c *Child) Wait() *WaitFuture { return &WaitFuture{c: c} }

// outcome returns the cached exit status, if the child was reaped.
func (c *Child) outcome() (future.Result[ExitStatus], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		return future.Result[ExitStatus]{}, false
	}
	return future.Result[ExitStatus]{Value: c.status, Err: c.err}, true
}

// reap waits for the process (once: later calls wait for the first one to
// finish), stores its outcome and closes the pidfd. It blocks until the
// child exits: a worker calls it only after the pidfd said the child has
// exited, when it returns at once; otherwise it runs on the blocking pool.
func (c *Child) reap() {
	c.reapOnce.Do(func() {
		err := c.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = nil // an unsuccessful exit is a status, not an error
		}
		if err != nil {
			err = fmt.Errorf("blitz: wait for process %d (%s): %w", c.pid, c.name, err)
		}
		c.mu.Lock()
		c.reaped = true
		c.status, c.err = ExitStatus{state: c.cmd.ProcessState}, err
		fd := c.pidfd
		c.pidfd = backend.InvalidFD
		c.mu.Unlock()
		if fd != backend.InvalidFD {
			// Polls of other waiters may still be in flight: a KindClose
			// completes them (with ErrCanceled) before it closes.
			if c.ring.Submit(&backend.Op{Kind: backend.KindClose, FD: fd}) != nil {
				_ = c.ring.Backend().CloseFD(fd) // backend closed: nothing in flight
			}
		}
	})
}

// submitPoll submits o, a KindPoll for readability of the pidfd, to the
// child's ring. ok is false when there is no pidfd (none, or closed because
// the child was reaped) or the backend refused the op.
func (c *Child) submitPoll(cx *future.Context, o *ioOp) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pidfd == backend.InvalidFD {
		return false
	}
	o.op = backend.Op{Kind: backend.KindPoll, FD: c.pidfd, Events: backend.EventIn}
	return o.submit(cx, c.ring.Ring) == nil
}

// discard kills the child, closes its pipes and reaps it on a goroutine of
// its own: the disposal of a Child nobody will receive.
func (c *Child) discard() {
	_ = c.Kill()
	if c.stdin != nil {
		_ = c.stdin.Close()
	}
	for _, o := range []*ChildOutput{c.stdout, c.stderr} {
		if o != nil {
			_ = o.Close()
		}
	}
	go c.reap()
}

// WaitFuture is the future of Child.Wait: its pointer is a
// future.Future[future.Result[ExitStatus]] and a future.Canceler. It must
// not be copied after its first poll.
type WaitFuture struct {
	c       *Child
	started bool
	polling bool // io is in flight
	io      ioOp
	pool    *BlockingFuture[struct{}]
	done    bool
}

// Poll waits for the child through its pidfd when it has one, else on the
// blocking pool.
func (w *WaitFuture) Poll(cx *future.Context) (future.Result[ExitStatus], bool) {
	if w.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if !w.started {
		w.started = true
		if w.c.stdin != nil {
			_ = w.c.stdin.Close()
		}
	}
	if w.pool == nil {
		if !w.polling && w.c.submitPoll(cx, &w.io) {
			w.polling = true
		}
		if w.polling {
			comp, ok := w.io.poll(cx)
			if !ok {
				return future.Result[ExitStatus]{}, false
			}
			w.polling = false
			if comp.Err == nil {
				w.c.reap() // the child has exited: returns at once
				pidfdWaits.Add(1)
			}
			// An error is another waiter's reap closing the pidfd (the
			// outcome is then cached), or a backend shutting down.
		}
		if r, ok := w.c.outcome(); ok {
			w.done = true
			return r, true
		}
		w.pool = Blocking(func() (struct{}, error) { w.c.reap(); return struct{}{}, nil })
	}
	r, ok := w.pool.Poll(cx)
	if !ok {
		return future.Result[ExitStatus]{}, false
	}
	w.done = true
	if r.Err != nil {
		return future.Fail[ExitStatus](r.Err), true
	}
	res, _ := w.c.outcome()
	return res, true
}

// Cancel abandons the wait: a poll in flight is cancelled; a wait on the
// pool runs on and reaps the child when it exits.
func (w *WaitFuture) Cancel() {
	if w.polling {
		w.polling = false
		w.io.abandon()
	}
	if w.pool != nil {
		w.pool.Cancel()
	}
	w.done = true
}

// ExitStatus is how a child ended. The zero value is not a status.
type ExitStatus struct {
	state *os.ProcessState
}

// Code returns the exit code, or -1 if the child was killed by a signal
// (on Windows, where Kill's TerminateProcess sets the code, 1).
func (s ExitStatus) Code() int {
	if s.state == nil {
		return -1
	}
	return s.state.ExitCode()
}

// Success reports whether the child exited with code 0.
func (s ExitStatus) Success() bool { return s.state != nil && s.state.Success() }

// Signal returns the signal that killed the child, and false if it was not
// killed by one (always false on Windows).
func (s ExitStatus) Signal() (os.Signal, bool) {
	if s.state == nil {
		return nil, false
	}
	ws, ok := s.state.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	})
	if !ok || !ws.Signaled() {
		return nil, false
	}
	return ws.Signal(), true
}

// String describes the status: "exit status 3", "signal: killed".
func (s ExitStatus) String() string {
	if s.state == nil {
		return "<no status>"
	}
	return s.state.String()
}

// Output is what Child.Output collects.
type Output struct {
	// Status is how the child ended; a failure is not an error of Output.
	Status ExitStatus
	// Stdout and Stderr are everything the child wrote to the stream, nil
	// when it was not Piped.
	Stdout, Stderr []byte
}

// Output returns a future that closes the child's piped stdin (see Wait),
// reads its piped stdout and stderr to the end, concurrently (so that a
// child filling both pipes does not block on one while the parent reads the
// other), and waits for it. Streams that are not Piped are left alone. A
// status that is not success is not an error.
func (c *Child) Output() *OutputFuture {
	f := &OutputFuture{wait: c.Wait()}
	if c.stdout != nil {
		f.out = c.stdout.ReadAll()
	}
	if c.stderr != nil {
		f.err = c.stderr.ReadAll()
	}
	return f
}

// OutputFuture is the future of Child.Output: its pointer is a
// future.Future[future.Result[Output]] and a future.Canceler.
type OutputFuture struct {
	wait     *WaitFuture
	out, err *PipeReadAllFuture // nil when not piped or finished
	res      Output
	waited   bool
	done     bool
}

// Poll advances the three parts; the first error ends the future and
// cancels the others.
func (f *OutputFuture) Poll(cx *future.Context) (future.Result[Output], bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	for _, p := range []struct {
		rd  **PipeReadAllFuture
		dst *[]byte
	}{{&f.out, &f.res.Stdout}, {&f.err, &f.res.Stderr}} {
		if *p.rd == nil {
			continue
		}
		r, ok := (*p.rd).Poll(cx)
		if !ok {
			continue
		}
		*p.rd = nil
		if r.Err != nil {
			f.Cancel()
			return future.Fail[Output](r.Err), true
		}
		*p.dst = r.Value
	}
	if !f.waited {
		r, ok := f.wait.Poll(cx)
		if ok {
			f.waited = true
			if r.Err != nil {
				f.Cancel()
				return future.Fail[Output](r.Err), true
			}
			f.res.Status = r.Value
		}
	}
	if f.out != nil || f.err != nil || !f.waited {
		return future.Result[Output]{}, false
	}
	f.done = true
	return future.Ok(f.res), true
}

// Cancel cancels the reads and the wait still pending. Data read already
// stays with the ChildOutput, for its next read.
func (f *OutputFuture) Cancel() {
	if f.out != nil {
		f.out.Cancel()
		f.out = nil
	}
	if f.err != nil {
		f.err.Cancel()
		f.err = nil
	}
	if !f.waited {
		f.waited = true
		f.wait.Cancel()
	}
	f.done = true
}
