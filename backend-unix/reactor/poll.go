//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"math"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// fdPoller is a Poller whose own descriptor polls readable when it has
// events or a Wake for its Wait (an epoll set, a kqueue).
type fdPoller interface {
	FD() int
}

// PollFD returns the poller's descriptor, if the poller has one that Go's
// poller can wait on (see backend.Pollable).
func (r *Reactor) PollFD() (backend.FD, bool) {
	p, ok := r.poller.(fdPoller)
	if !ok {
		return backend.InvalidFD, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pollerClosed {
		return backend.InvalidFD, false
	}
	return backend.FD(p.FD()), true
}

// StartPolling makes every completion posted from now on (an op finished
// on a submitting goroutine, a cancel, a Wake) and every sooner deadline
// kick the poller, which makes its descriptor readable, and returns how
// long until the earliest deadline of the reactor's timer heap (negative:
// none). The waiter calls Wait(out, 0) when PollFD is readable or that
// deadline passed.
func (r *Reactor) StartPolling() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.polling, r.kicked = true, false
	r.sleepUntil, r.pollUntil = math.MaxInt64, math.MaxInt64
	if len(r.heap) == 0 {
		return -1
	}
	r.sleepUntil, r.pollUntil = r.heap[0].when, r.heap[0].when
	return time.Duration(max(r.sleepUntil-r.now(), 0))
}

// StopPolling ends StartPolling's kicks.
func (r *Reactor) StopPolling() {
	r.mu.Lock()
	r.polling = false
	r.mu.Unlock()
}
