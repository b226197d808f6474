package epoll

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend-unix/reactor"
	"golang.org/x/sys/unix"
)

// kernelAtLeast reports whether the running kernel is major.minor or newer.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var ma, mi int
	for i, n := 0, 0; i < len(u.Release) && n < 2; i++ {
		c := u.Release[i]
		switch {
		case c >= '0' && c <= '9' && n == 0:
			ma = ma*10 + int(c-'0')
		case c >= '0' && c <= '9':
			mi = mi*10 + int(c-'0')
		default:
			n++
		}
	}
	return ma > major || ma == major && mi >= minor
}

// TestWaitTimeoutPrecise: a sub-millisecond timeout is slept for at least
// its length, with epoll_pwait2 where the kernel has it, and with
// epoll_wait's rounding up where it does not (forced here): never early.
func TestWaitTimeoutPrecise(t *testing.T) {
	for _, forceOld := range []bool{false, true} {
		p, err := newPoller()
		if err != nil {
			t.Fatal(err)
		}
		p.noPwait2 = forceOld
		events := make([]reactor.Event, 8)
		for _, d := range []time.Duration{0, 50 * time.Microsecond, 300 * time.Microsecond, 1500 * time.Microsecond} {
			// A signal (the Go runtime preempts with SIGURG) may end a
			// wait early with EINTR, reported as an empty return: early
			// three times running is the bug.
			var took time.Duration
			for range 3 {
				start := time.Now()
				n, err := p.Wait(events, d)
				took = time.Since(start)
				if err != nil || n != 0 {
					t.Fatalf("Wait(%v) = %d, %v; want a timeout", d, n, err)
				}
				if took >= d {
					break
				}
			}
			if took < d {
				t.Errorf("Wait(%v) returned after %v: early", d, took)
			}
		}
		if !forceOld && kernelAtLeast(5, 11) && p.noPwait2 {
			t.Errorf("epoll_pwait2 unused on a kernel from 5.11")
		}
		// A wake ends a wait without a timeout.
		if err := p.Wake(); err != nil {
			t.Fatal(err)
		}
		if n, err := p.Wait(events, -1); err != nil || n != 0 {
			t.Fatalf("Wait after Wake = %d, %v", n, err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWaitZeroReportsReady: a look (timeout 0, a raw system call on both
// paths) reports what is ready, reports nothing once it is taken (the
// registration is edge-triggered).
func TestWaitZeroReportsReady(t *testing.T) {
	for _, forceOld := range []bool{false, true} {
		p, err := newPoller()
		if err != nil {
			t.Fatal(err)
		}
		p.noPwait2 = forceOld
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Register(fds[0]); err != nil {
			t.Fatal(err)
		}
		events := make([]reactor.Event, 8)
		if n, err := p.Wait(events, 0); err != nil || n != 1 || events[0].FD != fds[0] {
			t.Fatalf("old=%v: first look = %d %v %+v, want the writable socket", forceOld, n, err, events[:n])
		}
		if n, err := p.Wait(events, 0); err != nil || n != 0 {
			t.Fatalf("old=%v: second look = %d %v, want nothing (edge-triggered)", forceOld, n, err)
		}
		if _, err := unix.Write(fds[1], []byte("x")); err != nil {
			t.Fatal(err)
		}
		n, err := p.Wait(events, 0)
		if err != nil || n != 1 || events[0].FD != fds[0] || events[0].Ready&backend.EventIn == 0 {
			t.Fatalf("old=%v: look after a write = %d %v %+v, want the socket readable", forceOld, n, err, events[:n])
		}
		unix.Close(fds[0])
		unix.Close(fds[1])
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
