//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// gatedPoller is a Poller whose Wait reports that it started and then
// waits for the test's release, so that the test can act while a Wait is
// inside the poller; it counts its Wakes.
type gatedPoller struct {
	inWait  chan struct{}
	release chan struct{}
	wakes   atomic.Int32
}

func (p *gatedPoller) Register(int) error   { return nil }
func (p *gatedPoller) Deregister(int) error { return nil }
func (p *gatedPoller) Wake() error          { p.wakes.Add(1); return nil }
func (p *gatedPoller) Close() error         { return nil }
func (p *gatedPoller) FD() int              { return 1000 } // never polled: the test is the waiter
func (p *gatedPoller) Wait([]Event, time.Duration) (int, error) {
	p.inWait <- struct{}{}
	<-p.release
	return 0, nil
}

// TestPollingTimerArmedDuringWaitZero: while polling, a deadline armed
// while the waiter's Wait(out, 0) is inside the poller (which makes no kick:
// that Wait's own deadline is now) must still reach the waiter, who sleeps
// towards the deadline StartPolling gave it: the Wait kicks the poller on
// its way out. Without the kick the waiter sleeps past the op's timeout
// (a dial with a timeout to a full accept queue hung this way).
func TestPollingTimerArmedDuringWaitZero(t *testing.T) {
	p := &gatedPoller{inWait: make(chan struct{}), release: make(chan struct{})}
	r := New(p)
	if own := r.StartPolling(); own >= 0 {
		t.Fatalf("StartPolling with an empty heap = %v, want negative", own)
	}
	done := make(chan int)
	go func() {
		n, _ := r.Wait(make([]backend.Completion, 4), 0)
		done <- n
	}()
	<-p.inWait
	before := p.wakes.Load()
	op := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}
	if err := r.Submit(op); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	close(p.release)
	if n := <-done; n != 0 {
		t.Fatalf("Wait(0) = %d completions, want 0", n)
	}
	if p.wakes.Load() == before {
		t.Fatal("a deadline armed during a polled waiter's Wait(0) did not kick the poller: the waiter sleeps past it")
	}
	if own := r.StartPolling(); own <= 0 || own > time.Hour {
		t.Errorf("StartPolling after the arm = %v, want the op's hour", own)
	}
	r.StopPolling()
	if err := r.cancel(op, backend.ErrCanceled); err != nil {
		t.Fatalf("cancel: %v", err)
	}
}
