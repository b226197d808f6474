//go:build !race

package blitz_test

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// The steady state of the runtime's file, timer and buffered-read paths: a
// task that runs one of them in a loop allocates nothing per operation
// after a warm-up (or the one value the API returns: a line's string, a
// Sleep's or a Timeout's future). Not run under the race detector, whose
// instrumentation allocates.

// allocsPerStep runs a task that calls step until it reports done n times
// (after a warm-up of n/10), and returns the allocations per done step:
// those of the task's spawn and wait (a run of no step) taken out, the
// least of three runs, so that what the Go runtime allocates now and then
// for itself (a select's record after a goroutine changed threads, a
// collection's bookkeeping) does not count as the step's.
func allocsPerStep(t *testing.T, h blitz.Handle, n int, step func(cx *future.Context) (done bool, err error)) float64 {
	t.Helper()
	run := func(n int) (mallocs, bytes uint64) {
		t.Helper()
		l := &stepLoop{step: step, left: n}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err, werr := blitz.SpawnOn(h, future.Future[error](l)).Wait(context.Background())
		runtime.ReadMemStats(&after)
		if err != nil || werr != nil {
			t.Fatal(err, werr)
		}
		return after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc
	}
	run(max(n/10, 10))
	best, bestBytes := math.Inf(1), 0.0
	for range 3 {
		fixed, fixedBytes := run(0)
		total, totalBytes := run(n)
		if per := (float64(total) - float64(fixed)) / float64(n); per < best {
			best, bestBytes = per, (float64(totalBytes)-float64(fixedBytes))/float64(n)
		}
	}
	t.Logf("%.1f bytes per step", bestBytes)
	return best
}

// stepLoop is a task polling step until it was done left times.
type stepLoop struct {
	step func(cx *future.Context) (bool, error)
	left int
}

func (l *stepLoop) Poll(cx *future.Context) (error, bool) {
	for l.left > 0 {
		done, err := l.step(cx)
		if err != nil {
			return err, true
		}
		if !done {
			return nil, false
		}
		l.left--
	}
	return nil, true
}

// opAllocBackends are the backends the alloc tests run on, those this
// machine has.
func opAllocBackends(t *testing.T) []string {
	var names []string
	for _, name := range []string{"uring", "epoll", "kqueue", "iocp"} {
		probe, err := blitz.New(blitz.Config{Workers: 1, Backend: name})
		if err != nil {
			continue
		}
		_ = probe.Shutdown(context.Background())
		names = append(names, name)
	}
	if len(names) == 0 {
		t.Skip("no I/O backend here")
	}
	return names
}

// openTemp opens a new file of t's temporary directory on h.
func openTemp(t *testing.T, h blitz.Handle) *blitz.File {
	t.Helper()
	r, err := blitz.BlockOn(context.Background(), h, future.Future[future.Result[*blitz.File]](blitz.Create(filepath.Join(fsTempDir(t), "f"))))
	if err == nil {
		err = r.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = blitz.BlockOn(context.Background(), h, future.Future[future.Result[struct{}]](r.Value.Close()))
	})
	return r.Value
}

// TestFileOpsAllocateNothing pins a file task's loop of WriteAt, ReadAt,
// Write, Read and Sync: on io_uring, where they are ring operations (or
// RWF_NOWAIT reads), nothing per operation; the futures are the File's
// own, reused (see File.Read). Elsewhere the file's calls run on the
// blocking pool, whose own records are still allocated per call: only
// reported.
func TestFileOpsAllocateNothing(t *testing.T) {
	for _, name := range opAllocBackends(t) {
		t.Run(name, func(t *testing.T) {
			rt := newRuntime(t, blitz.Config{Workers: 1, Backend: name})
			h := rt.Handle()
			f := openTemp(t, h)
			buf := make([]byte, 64)
			var dio *blitz.FileIOFuture
			var sync *blitz.FileOpFuture[struct{}]
			phase := 0
			step := func(cx *future.Context) (bool, error) {
				for {
					if phase == 4 {
						if sync == nil {
							sync = f.Sync()
						}
						r, ok := sync.Poll(cx)
						if !ok {
							return false, nil
						}
						sync, phase = nil, 0
						return true, r.Err
					}
					if dio == nil {
						switch phase {
						case 0:
							dio = f.WriteAt(buf, 0)
						case 1:
							dio = f.ReadAt(buf, 0)
						case 2:
							dio = f.Write(buf)
						case 3:
							dio = f.Read(buf)
						}
					}
					r, ok := dio.Poll(cx)
					if !ok {
						return false, nil
					}
					dio = nil
					phase++
					if r.Err != nil && r.Err != errEOF {
						return true, r.Err
					}
				}
			}
			per := allocsPerStep(t, h, 2000, step) / 5
			t.Logf("%s: %.3f allocations per file operation (on the ring: %v)", name, per, blitz.FileOnRing(f))
			if blitz.FileOnRing(f) && per > 0.01 {
				t.Errorf("%s: %.3f allocations per file operation; want none", name, per)
			}
		})
	}
}

// errEOF is io.EOF, which Read returns at the end of the file.
var errEOF = io.EOF

// TestSleepAllocatesOnlyItsFuture pins a task sleeping in a loop to the
// Sleep's own future: the timer wheel's entry and the driver's firing
// allocate nothing. A SleepFuture embedded and reset with ResetAfter
// allocates nothing at all.
func TestSleepAllocatesOnlyItsFuture(t *testing.T) {
	for _, name := range append(opAllocBackends(t), blitz.BackendNone) {
		t.Run(name, func(t *testing.T) { testSleepAllocs(t, name) })
	}
}

func testSleepAllocs(t *testing.T, backend string) {
	rt := newRuntime(t, blitz.Config{Workers: 1, Backend: backend})
	h := rt.Handle()
	var cur future.Future[struct{}]
	per := allocsPerStep(t, h, 300, func(cx *future.Context) (bool, error) {
		if cur == nil {
			cur = blitz.Sleep(50 * time.Microsecond)
		}
		if _, ok := cur.Poll(cx); !ok {
			return false, nil
		}
		cur = nil
		return true, nil
	})
	t.Logf("Sleep: %.3f allocations per sleep", per)
	if per > 1.02 {
		t.Errorf("Sleep: %.3f allocations per sleep; want 1 (its future)", per)
	}
	var s blitz.SleepFuture
	armed := false
	per = allocsPerStep(t, h, 300, func(cx *future.Context) (bool, error) {
		if !armed {
			s.ResetAfter(50 * time.Microsecond)
			armed = true
		}
		if _, ok := s.Poll(cx); !ok {
			return false, nil
		}
		armed = false
		return true, nil
	})
	t.Logf("SleepFuture.ResetAfter: %.3f allocations per sleep", per)
	if per > 0.02 {
		t.Errorf("SleepFuture.ResetAfter: %.3f allocations per sleep; want none", per)
	}
}

// TestTryTimeoutAllocatesOnlyItsFuture pins a task timing out in a loop (the
// inner future never completes, is cancelled) and one whose inner future
// wins, to TryTimeout's own future.
func TestTryTimeoutAllocatesOnlyItsFuture(t *testing.T) {
	for _, name := range append(opAllocBackends(t), blitz.BackendNone) {
		t.Run(name, func(t *testing.T) { testTryTimeoutAllocs(t, name) })
	}
}

func testTryTimeoutAllocs(t *testing.T, backend string) {
	rt := newRuntime(t, blitz.Config{Workers: 1, Backend: backend})
	h := rt.Handle()
	never, ready := &neverResult{}, &readyResult{}
	for _, c := range []struct {
		name  string
		inner future.Future[future.Result[int]]
		d     time.Duration
	}{{"times out", never, 50 * time.Microsecond}, {"inner wins", ready, time.Hour}} {
		var cur future.Future[future.Result[int]]
		per := allocsPerStep(t, h, 300, func(cx *future.Context) (bool, error) {
			if cur == nil {
				cur = blitz.TryTimeout(c.d, c.inner)
			}
			if _, ok := cur.Poll(cx); !ok {
				return false, nil
			}
			cur = nil
			return true, nil
		})
		t.Logf("TryTimeout, %s: %.3f allocations per timeout", c.name, per)
		if per > 1.02 {
			t.Errorf("TryTimeout, %s: %.3f allocations per timeout; want 1 (its future)", c.name, per)
		}
	}
}

// neverResult never completes; readyResult completes at each poll. Both can
// be polled again after completing or being cancelled.
type neverResult struct{}

func (*neverResult) Poll(*future.Context) (future.Result[int], bool) {
	return future.Result[int]{}, false
}
func (*neverResult) Cancel() {}

type readyResult struct{}

func (*readyResult) Poll(*future.Context) (future.Result[int], bool) { return future.Ok(1), true }

// TestReadLineAllocatesOnlyTheLine pins a BufReader.ReadLine loop to the
// line's string: the future is the reader's, reused (see ReadLine).
func TestReadLineAllocatesOnlyTheLine(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1, Backend: blitz.BackendNone})
	h := rt.Handle()
	rd := blitz.NewBufReader(&lineSource{line: []byte("a line of some length\r\n")}, 0)
	var cur *blitz.StreamFuture[string]
	per := allocsPerStep(t, h, 5000, func(cx *future.Context) (bool, error) {
		if cur == nil {
			cur = rd.ReadLine()
		}
		r, ok := cur.Poll(cx)
		if !ok {
			return false, nil
		}
		cur = nil
		if r.Value != "a line of some length" {
			t.Errorf("line %q", r.Value)
		}
		return true, r.Err
	})
	t.Logf("ReadLine: %.3f allocations per line", per)
	if per > 1.02 {
		t.Errorf("ReadLine: %.3f allocations per line; want 1 (the string)", per)
	}
}

// lineSource is an endless AsyncReader of line, over and over, which takes
// one poll pending out of every two reads (as a socket would).
type lineSource struct {
	line    []byte
	off     int
	pending bool
}

func (s *lineSource) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if s.pending = !s.pending; s.pending {
		cx.Waker().Wake()
		return future.Result[int]{}, false
	}
	n := 0
	for n < len(buf) {
		c := copy(buf[n:], s.line[s.off:])
		n += c
		s.off = (s.off + c) % len(s.line)
	}
	return future.Ok(n), true
}

func (s *lineSource) CancelRead() { s.pending = false }

// sinkWriter is an AsyncWriter that takes at most max bytes a write.
type sinkWriter struct{ max, n int }

func (w *sinkWriter) PollWrite(_ *future.Context, p []byte) (future.Result[int], bool) {
	n := min(len(p), w.max)
	w.n += n
	return future.Ok(n), true
}
func (w *sinkWriter) CancelWrite() {}

// keptWriteAll keeps a WriteAll future out of the test's stack.
var keptWriteAll future.Future[future.Result[int]]

// TestWriteAllAllocatesOnlyItsFuture: WriteAll over any AsyncWriter is one
// allocation, its future with its state, however many writes it takes.
func TestWriteAllAllocatesOnlyItsFuture(t *testing.T) {
	w := &sinkWriter{max: 3}
	buf := make([]byte, 10)
	cx := future.NewContext(waker.Noop())
	allocs := testing.AllocsPerRun(100, func() {
		keptWriteAll = blitz.WriteAll(w, buf) // kept, as a task or Block keeps it
		r, ok := keptWriteAll.Poll(cx)
		if !ok || r.Err != nil || r.Value != len(buf) {
			t.Fatalf("WriteAll: %v, %v", r, ok)
		}
	})
	keptWriteAll = nil
	if allocs != 1 {
		t.Fatalf("WriteAll: %v allocations, want 1 (its future)", allocs)
	}
}
