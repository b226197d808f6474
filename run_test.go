package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestRun: Run gives f's value on a runtime it starts and stops;
// RunFallible gives a fallible future's value and error; a context that
// ends first cancels f.
func TestRun(t *testing.T) {
	v, err := blitz.Run(context.Background(), future.Map(blitz.Sleep(time.Millisecond), func(struct{}) int { return 42 }))
	if v != 42 || err != nil {
		t.Fatalf("Run: %d, %v; want 42", v, err)
	}
	errBad := errors.New("bad")
	if _, err := blitz.RunFallible(context.Background(), future.Ready(future.Fail[int](errBad))); !errors.Is(err, errBad) {
		t.Fatalf("RunFallible: %v; want the future's error", err)
	}
	if v, err := blitz.RunFallible(context.Background(), future.Ready(future.Ok("x"))); v != "x" || err != nil {
		t.Fatalf("RunFallible: %q, %v", v, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := blitz.Run(ctx, future.Pending[int]()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run with an ending context: %v; want DeadlineExceeded", err)
	}
}

// TestNewTicker: the first tick comes one period after NewTicker, as with
// time.NewTicker, and a period <= 0 panics with ErrConfig.
func TestNewTicker(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	const period = 30 * time.Millisecond
	start := time.Now()
	iv := blitz.NewTicker(period)
	defer iv.Cancel()
	if _, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[time.Time](iv)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < period {
		t.Fatalf("the first tick came after %v; want one period, %v", took, period)
	}
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, blitz.ErrConfig) {
			t.Fatalf("NewTicker(0) recovered %v; want ErrConfig", err)
		}
	}()
	blitz.NewTicker(0)
	t.Fatal("NewTicker(0) returned")
}

// TestRunLeavesBlockingCalls: Run returns once f is done without waiting
// for a blocking call still running (a read of a terminal would never
// end); the call finishes later on its own thread.
func TestRunLeavesBlockingCalls(t *testing.T) {
	release, finished := make(chan struct{}), make(chan struct{})
	started := make(chan struct{})
	spawned := false
	f := future.PollFn(func(cx *future.Context) (int, bool) {
		if !spawned {
			spawned = true
			h, _ := blitz.Current(cx)
			blitz.SpawnBlocking(h, func() struct{} {
				close(started)
				<-release
				close(finished)
				return struct{}{}
			}).Detach()
		}
		select {
		case <-started:
			return 7, true
		default:
			cx.Waker().Wake() // poll again until the call runs
			return 0, false
		}
	})
	done := make(chan error, 1)
	go func() {
		v, err := blitz.Run(context.Background(), f)
		if err == nil && v != 7 {
			err = errors.New("wrong value")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run waited for a blocking call still running")
	}
	close(release)
	<-finished
}

// TestMainChild runs as the child of TestMainExits when its variable is set
// (and is skipped otherwise):
// a program whose main is blitz.Main of a failing future.
func TestMainChild(t *testing.T) {
	switch os.Getenv("BLITZ_MAIN_CHILD") {
	case "fail":
		blitz.Main(context.Background(), future.Ready(future.Fail[int](errors.New("the lookup failed"))))
		t.Fatal("Main returned after a failure")
	case "ok":
		fmt.Println("value", blitz.Main(context.Background(), future.Ready(future.Ok(42))))
	default:
		t.Skip("the child process of TestMainExits")
	}
}

// TestMainExits: blitz.Main returns the value of a future that succeeds,
// and for one that fails prints the error after the program's name on
// standard error and exits with status 1.
func TestMainExits(t *testing.T) {
	run := func(mode string) (string, string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainChild$")
		cmd.Env = append(os.Environ(), "BLITZ_MAIN_CHILD="+mode)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, _, err := run("ok")
	if err != nil || !strings.Contains(out, "value 42") {
		t.Fatalf("a succeeding main: %v, output %q; want value 42", err, out)
	}
	_, errOut, err := run("fail")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("a failing main ended with %v; want exit status 1", err)
	}
	want := filepath.Base(os.Args[0]) + ": the lookup failed\n"
	if errOut != want {
		t.Fatalf("a failing main printed %q; want %q", errOut, want)
	}
}
