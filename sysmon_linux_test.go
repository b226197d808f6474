package blitz_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestBusyWorkerLetsGoNetpollRun: a goroutine waiting on Go's network poller
// is not starved by a worker that works without parking on the only P. The
// worker was woken from a park by I/O alone, and its I/O makes raw system
// calls, so nothing else wakes Go's sysmon from the deep sleep it took while
// the process was idle; the worker wakes it after 10 ms of work, and sysmon
// then polls the network and preempts the worker. The peer is a child
// process, so that no goroutine of this one makes a system call meanwhile.
func TestBusyWorkerLetsGoNetpollRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rt := newRuntime(t, blitz.Config{Workers: 1, Backend: blitz.BackendEpoll})
	bl, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Close()
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer gl.Close()
	var goRead atomic.Bool
	goDone := make(chan error, 1)
	go func() {
		c, err := gl.Accept()
		if err != nil {
			goDone <- err
			return
		}
		defer c.Close()
		_, err = c.Read(make([]byte, 1))
		goRead.Store(true)
		goDone <- err
	}()
	const limit = 3 * time.Second
	h := blitz.SpawnOn(rt.Handle(), &busyAfterRead{accept: bl.Accept(), goRead: &goRead, limit: limit})
	cmd := exec.Command(childPath(), childFlag, "dial-write", bl.AddrPort().String(), gl.Addr().String(), "300ms")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	if err := cmd.Wait(); err != nil {
		t.Errorf("child: %v", err)
	}
	if err := <-goDone; err != nil {
		t.Errorf("goroutine's read: %v", err)
	}
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	if worked := res.Value; worked >= limit {
		t.Fatalf("the goroutine read only after the worker stopped working (%v): starved", worked)
	}
	t.Logf("the goroutine ran %v after the worker began working", res.Value)
}

// busyAfterRead accepts a connection, reads from it, then works (yields)
// until goRead is set or limit has passed, and returns how long it worked.
type busyAfterRead struct {
	accept *blitz.AcceptFuture[*blitz.TCPStream]
	s      *blitz.TCPStream
	goRead *atomic.Bool
	limit  time.Duration
	start  time.Time
}

func (b *busyAfterRead) Poll(cx *future.Context) (future.Result[time.Duration], bool) {
	if b.s == nil {
		r, ok := b.accept.Poll(cx)
		if !ok {
			return future.Result[time.Duration]{}, false
		}
		if r.Err != nil {
			return future.Result[time.Duration]{Err: r.Err}, true
		}
		b.s = r.Value
	}
	if b.start.IsZero() {
		r, ok := b.s.PollReadPooled(cx)
		if !ok {
			return future.Result[time.Duration]{}, false
		}
		r.Value.Release()
		if r.Err != nil {
			return future.Result[time.Duration]{Err: r.Err}, true
		}
		b.start = time.Now()
	}
	if worked := time.Since(b.start); b.goRead.Load() || worked >= b.limit {
		b.s.Close()
		return future.Result[time.Duration]{Value: worked}, true
	}
	cx.Yield()
	return future.Result[time.Duration]{}, false
}

func (b *busyAfterRead) Cancel() {
	b.accept.Cancel()
	if b.s != nil {
		b.s.Close()
	}
}
