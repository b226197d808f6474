package blitz_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// blockResult runs f on rt with BlockOn and unwraps its Result; a BlockOn
// failure (timeout, shutdown) fails the test.
func blockResult[T any](t *testing.T, rt *blitz.Runtime, f future.Future[future.Result[T]]) (T, error) {
	t.Helper()
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), f)
	if err != nil {
		t.Fatalf("BlockOn: %v", err)
	}
	return r.Value, r.Err
}

// spawnChild spawns cmd on rt and makes sure the child is killed and
// reaped, and its pipes closed, when the test ends (before rt shuts down).
func spawnChild(t *testing.T, rt *blitz.Runtime, cmd *blitz.Cmd) *blitz.Child {
	t.Helper()
	c, err := blockResult(t, rt, cmd.Spawn(rt.Handle()))
	if err != nil {
		t.Fatalf("spawn %v: %v", cmd, err)
	}
	t.Cleanup(func() {
		if err := c.Kill(); err != nil {
			t.Error(err)
		}
		if _, err := blitz.BlockOn(context.Background(), rt.Handle(), c.Wait()); err != nil {
			t.Error(err)
		}
		for _, o := range []*blitz.ChildOutput{c.Stdout(), c.Stderr()} {
			if o != nil {
				_ = o.Close()
			}
		}
	})
	return c
}

func TestProcessExitCodes(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	for _, tc := range []struct {
		cmd     *blitz.Cmd
		code    int
		success bool
		str     string
	}{
		{childCmd("exit", "0"), 0, true, "exit status 0"},
		{childCmd("exit", "1"), 1, false, "exit status 1"},
		{childCmd("exit", "3"), 3, false, "exit status 3"},
	} {
		c := spawnChild(t, rt, tc.cmd)
		if c.Pid() <= 0 {
			t.Errorf("%v: Pid %d", tc.cmd, c.Pid())
		}
		st, err := blockResult(t, rt, c.Wait())
		if err != nil {
			t.Fatalf("%v: wait: %v", tc.cmd, err)
		}
		if st.Code() != tc.code || st.Success() != tc.success || st.String() != tc.str {
			t.Errorf("%v: status %v (code %d, success %v), want code %d success %v",
				tc.cmd, st, st.Code(), st.Success(), tc.code, tc.success)
		}
		if sig, ok := st.Signal(); ok {
			t.Errorf("%v: Signal() = %v, true for a normal exit", tc.cmd, sig)
		}
	}
}

func TestProcessWaitTwiceReturnsTheSameStatus(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	c := spawnChild(t, rt, childCmd("exit", "7"))
	// Two waits at once, then a third after both.
	a, b := c.Wait(), c.Wait()
	both, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Join2(
		future.Future[future.Result[blitz.ExitStatus]](a), future.Future[future.Result[blitz.ExitStatus]](b)))
	if err != nil {
		t.Fatal(err)
	}
	third, err := blockResult(t, rt, c.Wait())
	if err != nil || both.First.Err != nil || both.Second.Err != nil {
		t.Fatalf("wait errors: %v, %v, %v", both.First.Err, both.Second.Err, err)
	}
	for i, st := range []blitz.ExitStatus{both.First.Value, both.Second.Value, third} {
		if st.Code() != 7 {
			t.Errorf("wait %d: code %d, want 7", i, st.Code())
		}
	}
	if err := c.Kill(); err != nil {
		t.Errorf("Kill of a reaped child: %v", err)
	}
}

func TestProcessMissingProgramIsNotFound(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	_, err := blockResult(t, rt, blitz.Command("blitz-no-such-program-7f3a").Spawn(rt.Handle()))
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("spawn of a program not in PATH: %v, want exec.ErrNotFound", err)
	}
	_, err = blockResult(t, rt, blitz.Command(filepath.Join(os.TempDir(), "blitz-no-such-dir-7f3a", "missing")).Spawn(rt.Handle()))
	// Windows looks a path up too (for its extensions): not found.
	if !errors.Is(err, fs.ErrNotExist) && (goruntime.GOOS != "windows" || !errors.Is(err, exec.ErrNotFound)) {
		t.Errorf("spawn of a missing path: %v, want fs.ErrNotExist", err)
	}
	if err != nil && !strings.Contains(err.Error(), "blitz: spawn") {
		t.Errorf("error %q lacks context", err)
	}
}

func TestProcessOutputCollectsBothPipesBeyondThePipeBuffer(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	// 40 rounds of 10,000 bytes to each stream, interleaved: a parent that
	// drained one stream before the other would leave the child blocked on
	// a full pipe (64 KiB on Linux) forever.
	c := spawnChild(t, rt, childCmd("both", "10000", "40", "2").Stdout(blitz.Piped).Stderr(blitz.Piped))
	out, err := blockResult(t, rt, c.Output())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Stdout) != 400000 || len(out.Stderr) != 400000 {
		t.Errorf("collected %d bytes of stdout and %d of stderr, want 400000 each", len(out.Stdout), len(out.Stderr))
	}
	if out.Status.Code() != 2 {
		t.Errorf("status %v, want exit status 2", out.Status)
	}
}

func TestProcessOutputLeavesUnpipedStreamsNil(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	c := spawnChild(t, rt, childCmd("outerr").Stdout(blitz.Piped).Stderr(blitz.Null))
	out, err := blockResult(t, rt, c.Output())
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Stdout) != "out\n" || out.Stderr != nil || !out.Status.Success() {
		t.Errorf("Output = %q, %q, %v; want \"out\\n\", nil, success", out.Stdout, out.Stderr, out.Status)
	}
	if c.Stdin() != nil || c.Stderr() != nil {
		t.Error("streams that are not Piped have pipe ends")
	}
}

func TestProcessStdinEchoedThroughCat(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	c := spawnChild(t, rt, childCmd("cat").Stdin(blitz.Piped).Stdout(blitz.Piped))
	// More than a pipe buffer each way, so the reader and the writer must
	// run at once: the read in a task, the writes here.
	data := bytes.Repeat([]byte("0123456789abcdef"), 20000)
	reader := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[[]byte]](c.Stdout().ReadAll()))
	for _, part := range [][]byte{data[:100000], data[100000:]} {
		n, err := blockResult(t, rt, c.Stdin().Write(part))
		if err != nil || n != len(part) {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(part))
		}
	}
	if err := c.Stdin().Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stdin().Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := blockResult(t, rt, c.Stdin().Write([]byte("late"))); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: %v, want os.ErrClosed", err)
	}
	r, err := reader.Wait(testCtx(t))
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if !bytes.Equal(r.Value, data) {
		t.Errorf("cat echoed %d bytes, want the %d written", len(r.Value), len(data))
	}
	st, err := blockResult(t, rt, c.Wait())
	if err != nil || !st.Success() {
		t.Errorf("cat ended with %v, %v", st, err)
	}
	// At end of stream a read reports io.EOF.
	if n, err := blockResult(t, rt, c.Stdout().Read(make([]byte, 8))); n != 0 || err != io.EOF {
		t.Errorf("Read at end = %d, %v; want 0, io.EOF", n, err)
	}
}

func TestProcessWaitClosesPipedStdin(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	// cat ends only when its input does: Wait must close it.
	c := spawnChild(t, rt, childCmd("cat").Stdin(blitz.Piped).Stdout(blitz.Null))
	if n, err := blockResult(t, rt, c.Stdin().Write([]byte("x\n"))); n != 2 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	st, err := blockResult(t, rt, c.Wait())
	if err != nil || !st.Success() {
		t.Errorf("cat ended with %v, %v", st, err)
	}
}

func TestProcessCancelledReadKeepsItsData(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	// The child prints only after a line on its input, so the first read is
	// surely blocked in the pipe when it is cancelled.
	c := spawnChild(t, rt, childCmd("readline-hello").Stdin(blitz.Piped).Stdout(blitz.Piped))
	first := make([]byte, 16)
	res, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(20*time.Millisecond, future.Future[future.Result[int]](c.Stdout().Read(first))))
	if err != nil || !errors.Is(res.Err, blitz.ErrTimeout) {
		t.Fatalf("first read: %v, %v; want a timeout", res, err)
	}
	if _, err := blockResult(t, rt, c.Stdin().Write([]byte("go\n"))); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	var got []byte
	for len(got) < 5 {
		n, err := blockResult(t, rt, c.Stdout().Read(buf))
		if err != nil {
			t.Fatalf("read after the cancel: %v (have %q)", err, got)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "hello" {
		t.Errorf("read %q, want hello", got)
	}
	if !bytes.Equal(first, make([]byte, len(first))) {
		t.Error("the cancelled read wrote into its buffer")
	}
}

func TestProcessEnvDirAndClearEnv(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	dir := fsTempDir(t)
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BLITZ_PROC_INHERITED", "yes")
	c := spawnChild(t, rt, childCmd("env").
		Env("BLITZ_A=1", "BLITZ_A=2").Dir(dir).Stdout(blitz.Piped))
	out, err := blockResult(t, rt, c.Output())
	if err != nil {
		t.Fatal(err)
	}
	got, wd, _ := strings.Cut(strings.TrimSuffix(string(out.Stdout), "\n"), ":yes:")
	if got != "2" {
		t.Errorf("child printed %q, want BLITZ_A=2 and the inherited variable", out.Stdout)
	}
	if resolved, err := filepath.EvalSymlinks(wd); err != nil || !strings.EqualFold(resolved, want) {
		t.Errorf("child ran in %q (%q, %v), want %q", wd, resolved, err, want)
	}
	c = spawnChild(t, rt, blitz.Command(childPath()).Arg(childFlag, "env-short").
		ClearEnv().Env("BLITZ_A=3").Stdout(blitz.Piped))
	out, err = blockResult(t, rt, c.Output())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out.Stdout); got != "3:" {
		t.Errorf("child of a cleared environment printed %q, want \"3:\"", got)
	}
}

// spawnAndWait is a task that spawns cmd and waits for it.
type spawnAndWait struct {
	spawn *blitz.SpawnFuture
	wait  *blitz.WaitFuture
}

func (s *spawnAndWait) Poll(cx *future.Context) (future.Result[blitz.ExitStatus], bool) {
	if s.wait == nil {
		r, ok := s.spawn.Poll(cx)
		if !ok {
			return future.Result[blitz.ExitStatus]{}, false
		}
		if r.Err != nil {
			return future.Fail[blitz.ExitStatus](r.Err), true
		}
		s.wait = r.Value.Wait()
	}
	return s.wait.Poll(cx)
}

func TestProcessWaitFromATask(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[blitz.ExitStatus]](
		&spawnAndWait{spawn: childCmd("exit", "4").Spawn(rt.Handle())}))
	r, err := h.Wait(testCtx(t))
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if r.Value.Code() != 4 {
		t.Errorf("status %v, want exit status 4", r.Value)
	}
}

func TestProcessWaitDoesNotHoldAWorker(t *testing.T) {
	for _, backend := range []string{blitz.BackendAuto, blitz.BackendNone} {
		t.Run("backend="+backend, func(t *testing.T) {
			rt := newRuntime(t, blitz.Config{Workers: 1, Backend: backend})
			c := spawnChild(t, rt, childCmd("sleep", "10s"))
			waiter := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[blitz.ExitStatus]](c.Wait()))
			// The one worker polled the wait first; a sleep spawned after it
			// can finish only if the wait left the worker free.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := blitz.SpawnOn(rt.Handle(), blitz.Sleep(10*time.Millisecond)).Wait(ctx); err != nil {
				t.Fatalf("a sleep behind a wait: %v", err)
			}
			if waiter.IsFinished() {
				t.Fatal("the wait finished before the child was killed")
			}
			if err := c.Kill(); err != nil {
				t.Fatal(err)
			}
			r, err := waiter.Wait(testCtx(t))
			if err != nil || r.Err != nil {
				t.Fatal(err, r.Err)
			}
			// Unix reports the signal (code -1); Windows' TerminateProcess
			// makes the exit code 1.
			wantCode := -1
			if goruntime.GOOS == "windows" {
				wantCode = 1
			}
			if r.Value.Success() || r.Value.Code() != wantCode {
				t.Errorf("killed child: %v (code %d, want %d)", r.Value, r.Value.Code(), wantCode)
			}
		})
	}
}

func TestProcessCancelledWriteStillGoesOutInOrder(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	c := spawnChild(t, rt, childCmd("cat").Stdin(blitz.Piped).Stdout(blitz.Piped))
	// Nobody reads cat's output yet, so a megabyte cannot go through: the
	// write blocks in the pipe and the timeout cancels its future.
	big := bytes.Repeat([]byte("x"), 1<<20)
	res, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(20*time.Millisecond, future.Future[future.Result[int]](c.Stdin().Write(big))))
	if err != nil || !errors.Is(res.Err, blitz.ErrTimeout) {
		t.Fatalf("big write: %v, %v; want a timeout", res, err)
	}
	big[0] = 'y' // the write copied its buffer
	tail := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[int]](c.Stdin().Write([]byte("END"))))
	reader := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[[]byte]](c.Stdout().ReadAll()))
	if r, err := tail.Wait(testCtx(t)); err != nil || r.Err != nil || r.Value != 3 {
		t.Fatalf("tail write: %v, %v", r, err)
	}
	if err := c.Stdin().Close(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Wait(testCtx(t))
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	want := append(bytes.Repeat([]byte("x"), 1<<20), "END"...)
	if !bytes.Equal(r.Value, want) {
		t.Errorf("cat echoed %d bytes (ends %q), want the cancelled megabyte then END", len(r.Value), r.Value[max(0, len(r.Value)-5):])
	}
}
