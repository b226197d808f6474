package blitz

import (
	"io"
	"os"
	"os/signal"
	"sync"
)

// This file is the task dump: on demand (Dump, DumpEach) and on a signal
// (DumpOnSignal). See the package doc, "Task identity and dumps", for the
// format. The runtime links no HTTP server: a handler that serves the dump
// belongs with the other handlers, in the inspect package.

// Dump writes the runtime's live tasks to w, grouped as a goroutine dump
// groups identical stacks: tasks in the same state, waiting on the same
// kind of thing, with the same name and spawn site, make one stanza with
// their count, their ids and the range of their ages, idle times and
// polls, the largest groups first. Any goroutine may call it, at any time;
// it returns the error of writing to w.
func (rt *Runtime) Dump(w io.Writer) error { return rt.sched.Dump(w) }

// DumpEach is Dump with one stanza per task, in the order of their ids.
func (rt *Runtime) DumpEach(w io.Writer) error { return rt.sched.DumpEach(w) }

// DumpOnSignal writes the task dump (Dump) to w each time the process
// receives sig, until stop is called, as the Go runtime dumps its
// goroutines on SIGQUIT; sig is one the program opts into, such as
// syscall.SIGUSR1 on Unix. A goroutine waits for the signal (os/signal)
// and writes the dumps, one at a time; stop stops the delivery, ends that
// goroutine and waits for a dump in progress. Call stop before the
// runtime's Shutdown returns or after: a dump of a runtime shut down lists
// no tasks.
func (rt *Runtime) DumpOnSignal(sig os.Signal, w io.Writer) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	signal.Notify(ch, sig)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ch:
				rt.Dump(w)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			wg.Wait()
		})
	}
}
