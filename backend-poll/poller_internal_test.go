//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package poll

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend-unix/reactor"
	"golang.org/x/sys/unix"
)

// newTestPoller makes a poller closed at the end of the test.
func newTestPoller(t *testing.T) *poller {
	t.Helper()
	p, err := newPoller()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// testPipe makes a non-blocking pipe closed at the end of the test.
func testPipe(t *testing.T) (r, w int) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return fds[0], fds[1]
}

func mustWrite(t *testing.T, fd int, s string) {
	t.Helper()
	if _, err := unix.Write(fd, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// drainFD reads everything waiting on fd.
func drainFD(fd int) {
	var b [256]byte
	for {
		if n, err := unix.Read(fd, b[:]); n <= 0 || err != nil {
			return
		}
	}
}

// waitOnce runs one Wait and returns its events.
func waitOnce(t *testing.T, p *poller, timeout time.Duration) []reactor.Event {
	t.Helper()
	ev := make([]reactor.Event, 16)
	n, err := p.Wait(ev, timeout)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return ev[:n]
}

// expectReady fails unless evs is one report of fd with want among its
// events.
func expectReady(t *testing.T, evs []reactor.Event, fd int, want backend.Events) {
	t.Helper()
	if len(evs) != 1 || evs[0].FD != fd || evs[0].Ready&want != want {
		t.Fatalf("events %+v, want fd %d ready for %v", evs, fd, want)
	}
}

// expectQuiet waits for d in short Waits and fails on any event, or when
// the Waits return far more often than their timeout says (a spin).
func expectQuiet(t *testing.T, p *poller, d time.Duration) {
	t.Helper()
	const slice = 20 * time.Millisecond
	calls := 0
	for start := time.Now(); time.Since(start) < d; calls++ {
		if evs := waitOnce(t, p, slice); len(evs) != 0 {
			t.Fatalf("reported %+v; want nothing", evs)
		}
	}
	if limit := int(d/slice) + 3; calls > limit {
		t.Fatalf("%d Waits of %v in %v: Wait returns early", calls, slice, d)
	}
}

// A registration reports a readable descriptor once; while no op waits on
// it, data left unread makes no second report and Wait does not spin.
func TestUnreadDataReportedOnce(t *testing.T) {
	p := newTestPoller(t)
	r, w := testPipe(t)
	mustWrite(t, w, "x")
	if err := p.Register(r); err != nil {
		t.Fatal(err)
	}
	expectReady(t, waitOnce(t, p, 0), r, backend.EventIn)
	expectQuiet(t, p, 100*time.Millisecond)
	mustWrite(t, w, "more data nobody reads")
	expectQuiet(t, p, 60*time.Millisecond)
}

// An op waiting to read re-arms the direction: the data is reported again
// and on every Wait while it waits unread (level, as the reactor reads it
// at once), not at all once drained, and again on the next arrival; when
// the op is gone, nothing is.
func TestWaitingOpReArms(t *testing.T) {
	p := newTestPoller(t)
	r, w := testPipe(t)
	mustWrite(t, w, "x")
	if err := p.Register(r); err != nil {
		t.Fatal(err)
	}
	expectReady(t, waitOnce(t, p, 0), r, backend.EventIn)
	p.count(r, backend.EventIn, 1)
	expectReady(t, waitOnce(t, p, 0), r, backend.EventIn)
	expectReady(t, waitOnce(t, p, 0), r, backend.EventIn)
	drainFD(r)
	expectQuiet(t, p, 40*time.Millisecond)
	mustWrite(t, w, "y")
	expectReady(t, waitOnce(t, p, time.Second), r, backend.EventIn)
	p.count(r, backend.EventIn, -1)
	expectQuiet(t, p, 40*time.Millisecond)
}

// A registration, an op's count and a Wake, made while another goroutine
// is blocked in Wait, each reach it: the poll set is rebuilt.
func TestChangesReachBlockedWait(t *testing.T) {
	p := newTestPoller(t)
	r, w := testPipe(t)
	mustWrite(t, w, "x")

	blocked := func(name string, change func()) []reactor.Event {
		t.Helper()
		done := make(chan []reactor.Event, 1)
		var stop atomic.Bool
		go func() {
			ev := make([]reactor.Event, 4)
			for {
				// A wake-up may return nothing: the reactor waits again
				// with the set rebuilt, and so does this loop.
				n, err := p.Wait(ev, -1)
				if n > 0 || err != nil || stop.Load() {
					done <- ev[:n]
					return
				}
			}
		}()
		time.Sleep(20 * time.Millisecond) // let it block (the test holds either way)
		change()
		select {
		case evs := <-done:
			return evs
		case <-time.After(5 * time.Second):
			stop.Store(true)
			_ = p.Wake()
			<-done
			t.Fatalf("%s did not reach the blocked Wait", name)
			return nil
		}
	}

	expectReady(t, blocked("Register", func() { _ = p.Register(r) }), r, backend.EventIn)
	// The registration's report is used up; the data stays unread.
	expectReady(t, blocked("an op's count", func() { p.count(r, backend.EventIn, 1) }), r, backend.EventIn)
	p.count(r, backend.EventIn, -1)

	done := make(chan error, 1)
	go func() {
		n, err := p.Wait(make([]reactor.Event, 4), -1)
		if err == nil && n != 0 {
			err = errors.New("events from a Wake")
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := p.Wake(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wake did not end the blocked Wait")
	}
}

// A Wake before Wait ends the next Wait at once; wake-ups coalesce and are
// consumed, so the Wait after waits its full timeout.
func TestWakeBeforeWait(t *testing.T) {
	p := newTestPoller(t)
	for range 3 {
		if err := p.Wake(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if evs := waitOnce(t, p, 5*time.Second); len(evs) != 0 {
		t.Fatalf("events %+v from a Wake", evs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Wait after Wake took %v", d)
	}
	p.mu.Lock()
	woken := p.woken
	p.mu.Unlock()
	if woken {
		t.Fatal("the wake-up is still pending after the Wait it ended")
	}
	// A signal (the Go runtime preempts with SIGURG) may end a poll early
	// with EINTR, which Wait reports as an empty return; a wake-up left
	// unconsumed would end every Wait at once, thousands in the window.
	const window = 30 * time.Millisecond
	returns := 0
	for deadline := time.Now().Add(window); ; returns++ {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		waitOnce(t, p, left)
	}
	if returns > 20 {
		t.Fatalf("%d Waits returned in %v: the wake-up was not consumed", returns, window)
	}
}

// Deregister takes the descriptor out of the poll set, even with ops
// counted; registering it again arms it afresh.
func TestDeregister(t *testing.T) {
	p := newTestPoller(t)
	r, w := testPipe(t)
	mustWrite(t, w, "x")
	if err := p.Register(r); err != nil {
		t.Fatal(err)
	}
	p.count(r, backend.EventIn, 1)
	if err := p.Deregister(r); err != nil {
		t.Fatal(err)
	}
	if err := p.Deregister(r); err != nil {
		t.Fatalf("second Deregister: %v", err)
	}
	expectQuiet(t, p, 40*time.Millisecond)
	p.count(r, backend.EventIn, -1)
	if err := p.Register(r); err != nil {
		t.Fatal(err)
	}
	expectReady(t, waitOnce(t, p, 0), r, backend.EventIn)
}

// Reports that find no room in events stay armed for the next Wait.
func TestReportsBeyondRoomWait(t *testing.T) {
	p := newTestPoller(t)
	seen := map[int]bool{}
	for range 3 {
		r, w := testPipe(t)
		mustWrite(t, w, "x")
		if err := p.Register(r); err != nil {
			t.Fatal(err)
		}
		seen[r] = false
	}
	ev := make([]reactor.Event, 1)
	for range 3 {
		n, err := p.Wait(ev, 0)
		if err != nil || n != 1 {
			t.Fatalf("Wait: %d, %v", n, err)
		}
		if done, ok := seen[ev[0].FD]; !ok || done {
			t.Fatalf("reported %+v (seen: %v)", ev[0], seen)
		}
		seen[ev[0].FD] = true
	}
	expectQuiet(t, p, 40*time.Millisecond)
}

// A hang-up with no op waiting is reported once, like readiness.
func TestHangUpReportedOnce(t *testing.T) {
	p := newTestPoller(t)
	r, w := testPipe(t)
	unix.Close(w)
	if err := p.Register(r); err != nil {
		t.Fatal(err)
	}
	evs := waitOnce(t, p, time.Second)
	if len(evs) != 1 || evs[0].FD != r || evs[0].Ready&(backend.EventHup|backend.EventIn) == 0 {
		t.Fatalf("events %+v, want fd %d hung up", evs, r)
	}
	expectQuiet(t, p, 40*time.Millisecond)
}

// After Close every method fails with EBADF and Close is not repeated.
func TestClose(t *testing.T) {
	p, err := newPoller()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(make([]reactor.Event, 1), 0); err != unix.EBADF {
		t.Errorf("Wait after Close: %v", err)
	}
	if err := p.Wake(); err != unix.EBADF {
		t.Errorf("Wake after Close: %v", err)
	}
	if err := p.Register(0); err != unix.EBADF {
		t.Errorf("Register after Close: %v", err)
	}
	if err := p.Close(); err != unix.EBADF {
		t.Errorf("second Close: %v", err)
	}
}

// A completion handed out before the submitter counted its op leaves the
// count at zero, as does an armed receive whose completion came before
// ArmRecv returned; a More completion uncounts nothing.
func TestCountsOutOfOrder(t *testing.T) {
	p := newTestPoller(t)
	op := &backend.Op{Kind: backend.KindSend, FD: 7}
	p.completed([]backend.Completion{{Op: op}})
	p.count(7, sides(op), 1)
	if w := p.fds[7]; w.writers != 0 {
		t.Fatalf("writers %d after completion then count", w.writers)
	}

	if !p.armStart(42, 8) {
		t.Fatal("armStart refused a new key")
	}
	if p.armStart(42, 9) {
		t.Fatal("armStart took a key in flight")
	}
	p.completed([]backend.Completion{{UserData: 42}})
	p.armDone(42, true)
	if w := p.fds[8]; w != nil && w.readers != 0 {
		t.Fatalf("readers %d after completion then armDone", w.readers)
	}
	p.armStart(43, 8)
	p.armDone(43, true)
	if w := p.fds[8]; w.readers != 1 {
		t.Fatalf("readers %d with a receive armed", w.readers)
	}
	p.completed([]backend.Completion{{UserData: 43}})
	if w := p.fds[8]; w.readers != 0 || len(p.arms) != 0 {
		t.Fatalf("readers %d, arms %v after the armed receive's completion", w.readers, p.arms)
	}
	p.armStart(44, 8)
	p.armDone(44, false)
	if len(p.arms) != 0 || p.fds[8].readers != 0 {
		t.Fatal("a failed arm stayed counted")
	}

	acc := &backend.Op{Kind: backend.KindAccept, FD: 9, Flags: backend.Multishot}
	p.count(9, sides(acc), 1)
	p.completed([]backend.Completion{{Op: acc, Flags: backend.More}})
	if w := p.fds[9]; w.readers != 1 {
		t.Fatalf("readers %d after a More completion", w.readers)
	}
}

func TestSides(t *testing.T) {
	for _, c := range []struct {
		op   backend.Op
		want backend.Events
	}{
		{backend.Op{Kind: backend.KindRecv}, backend.EventIn},
		{backend.Op{Kind: backend.KindAccept}, backend.EventIn},
		{backend.Op{Kind: backend.KindReadv}, backend.EventIn},
		{backend.Op{Kind: backend.KindSendTo}, backend.EventOut},
		{backend.Op{Kind: backend.KindConnect}, backend.EventOut},
		{backend.Op{Kind: backend.KindPoll, Events: backend.EventOut | backend.EventErr}, backend.EventOut},
		{backend.Op{Kind: backend.KindPoll, Events: backend.EventIn | backend.EventOut}, backend.EventIn | backend.EventOut},
		{backend.Op{Kind: backend.KindTimeout}, 0},
		{backend.Op{Kind: backend.KindClose}, 0},
	} {
		if got := sides(&c.op); got != c.want {
			t.Errorf("sides(%v) = %v, want %v", c.op.Kind, got, c.want)
		}
	}
}

func TestPollTimeout(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{-1, -1}, {0, 0}, {time.Nanosecond, 1}, {time.Millisecond, 1},
		{time.Millisecond + 1, 2}, {time.Second, 1000}, {1 << 62, 1<<31 - 1},
	} {
		if got := pollTimeout(c.d); got != c.want {
			t.Errorf("pollTimeout(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}
