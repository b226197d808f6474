package reactor

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// scriptedPoller is a Poller whose Wait reports the events the test queued
// (then nothing), and which counts its Wakes.
type scriptedPoller struct {
	events chan Event
	wakes  atomic.Int32
}

func (p *scriptedPoller) Register(int) error   { return nil }
func (p *scriptedPoller) Deregister(int) error { return nil }
func (p *scriptedPoller) Wake() error          { p.wakes.Add(1); return nil }
func (p *scriptedPoller) Close() error         { return nil }
func (p *scriptedPoller) FD() int              { return 1000 } // never polled: the test is the waiter
func (p *scriptedPoller) Wait(out []Event, _ time.Duration) (int, error) {
	select {
	case ev := <-p.events:
		out[0] = ev
		return 1, nil
	default:
		return 0, nil
	}
}

// TestPolledWaiterDispatchDoesNotKick: a waiter polled through Go's poller
// looks with Wait(out, 0); the armed receive its own dispatch completes is
// returned by that Wait and must not kick the poller (a kick costs a
// system call and a spurious wake of the waiter). A completion posted
// after the Wait, while the waiter is back in Go's poller, still kicks.
func TestPolledWaiterDispatchDoesNotKick(t *testing.T) {
	p := &scriptedPoller{events: make(chan Event, 1)}
	r := New(p)
	defer r.Close()
	if err := r.RegisterBufferGroup(1, 4, 64); err != nil {
		t.Fatal(err)
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sp[1])
	fd := backend.FD(sp[0])
	if err := r.ArmRecv(fd, 1, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(sp[1], []byte("hello")); err != nil {
		t.Fatal(err)
	}

	r.StartPolling()
	p.events <- Event{FD: sp[0], Ready: backend.EventIn}
	out := make([]backend.Completion, 4)
	n, err := r.Wait(out, 0)
	if err != nil || n != 1 {
		t.Fatalf("Wait(0) = %d, %v; want the armed receive", n, err)
	}
	if out[0].UserData != 7 || out[0].N != 5 {
		t.Fatalf("completion %+v, want key 7 and 5 bytes", out[0])
	}
	if w := p.wakes.Load(); w != 0 {
		t.Fatalf("the waiter's own dispatch kicked the poller %d times", w)
	}
	if err := r.ReleaseBuffer(1, out[0].BufferID); err != nil {
		t.Fatal(err)
	}

	// Back in Go's poller: a completion posted now (a cancel of the armed
	// receive, re-armed first) must kick it.
	if err := r.ArmRecv(fd, 1, 8); err != nil {
		t.Fatal(err)
	}
	if err := r.CancelRecv(fd); err != nil {
		t.Fatal(err)
	}
	if w := p.wakes.Load(); w != 1 {
		t.Fatalf("a completion posted while the waiter polls made %d kicks, want 1", w)
	}
	r.StopPolling()
	if n, _ := r.Wait(out, 0); n != 1 || out[0].UserData != 8 {
		t.Fatalf("after the cancel, Wait(0) = %d (%+v), want the cancelled receive", n, out[0])
	}
	if err := r.CloseFD(fd); err != nil {
		t.Fatal(err)
	}
}
