//go:build unix

// Command jobs runs shell jobs as child processes of the runtime and stops
// gracefully: each running job holds a guard of a shutdown Coordinator; on
// interrupt (or when the jobs are done) no new job starts, running jobs get
// a grace period, and those still running after it are killed. The jobs'
// first output lines then go through a process pipeline, `sort`, for the
// report.
//
// Kill stops the job's own process, not processes it started: a job that
// runs a long command should exec it (as the demo's slow job does), or the
// orphan would keep the output pipe open and the job would never end.
//
//	go run ./examples/jobs          # the demo jobs; stops after a second, or on Ctrl-C
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

func main() {
	jobs := []string{
		"echo pear; sleep 0.2",
		"echo apple; sleep 0.1",
		"echo cherry",
		"echo slowpoke; exec sleep 30", // killed after the grace period
	}
	// The demo stops itself after a second, as an operator's Ctrl-C would.
	stop := make(chan struct{})
	time.AfterFunc(time.Second, func() { close(stop) })
	if err := run(jobs, 500*time.Millisecond, os.Stdout, stop); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// await runs a future of a Result from this goroutine.
func await[T any](h blitz.Handle, f future.Future[future.Result[T]]) (T, error) {
	r, err := blitz.BlockOn(context.Background(), h, f)
	if err == nil {
		err = r.Err
	}
	return r.Value, err
}

// run starts every job, waits until they finish or a signal (or trigger,
// for tests) asks to stop, gives the rest grace to finish, kills what is
// left, and prints the sorted first lines of the jobs that finished.
func run(jobs []string, grace time.Duration, out io.Writer, trigger <-chan struct{}) error {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	h := rt.Handle()

	c := blitz.NewCoordinator()
	if err := c.TriggerOnSignal(h, os.Interrupt, syscall.SIGTERM); err != nil {
		return err
	}
	var (
		mu       sync.Mutex
		children = map[string]*blitz.Child{}
		firsts   []string
		wg       sync.WaitGroup
	)
	for i, job := range jobs {
		name := fmt.Sprintf("job %d", i)
		g, err := c.Guard(name)
		if err != nil {
			break // stopping: no new job
		}
		child, err := await(h, blitz.Command("sh", "-c", job).Stdout(blitz.Piped).Spawn(h))
		if err != nil {
			g.Release()
			return err
		}
		mu.Lock()
		children[name] = child
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The first line as it comes, the rest drained (a child
			// blocked on a full pipe would never finish), then the wait.
			out := blitz.NewBufReader(child.Stdout(), 0)
			first, ferr := await(h, out.ReadLine())
			_, derr := await(h, blitz.Copy(blitz.FromIOWriter(io.Discard), out))
			st, err := await(h, child.Wait())
			if ferr == nil && derr == nil && err == nil && st.Success() {
				mu.Lock()
				firsts = append(firsts, first)
				mu.Unlock()
			}
			g.Release() // killed jobs release too, once reaped
		}()
	}

	// Stop when every job is done, on a signal, or when the test says so.
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	select {
	case <-allDone:
	case <-c.Done():
	case <-trigger:
	}
	c.Trigger()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	report, err := c.Wait(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(out, "after %v, still running: %s: killing\n", grace, strings.Join(report.Held, ", "))
		mu.Lock()
		for _, name := range report.Held {
			_ = children[name].Kill()
		}
		mu.Unlock()
	}
	wg.Wait()

	// The report goes through a pipeline: sort's stdin is fed from here.
	sorter, err := await(h, blitz.Command("sort").Stdin(blitz.Piped).Stdout(blitz.Piped).Spawn(h))
	if err != nil {
		return err
	}
	if _, err := await(h, sorter.Stdin().Write([]byte(strings.Join(firsts, "\n")+"\n"))); err != nil {
		return err
	}
	sorted, err := await(h, sorter.Output())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "finished, sorted:\n%s", sorted.Stdout)
	return nil
}
