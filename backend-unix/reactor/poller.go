//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"time"

	"github.com/blitz-go/blitz/backend"
)

// Event is one readiness report of a Poller: descriptor FD became ready for
// Ready (backend.EventIn, EventOut, EventErr, EventHup).
type Event struct {
	FD    int
	Ready backend.Events
}

// Poller is the platform part of a readiness backend. The Reactor calls
// Wait from one goroutine at a time; Register, Deregister and Wake from any
// goroutine, concurrently with a blocked Wait; Close once, when no Wait is
// running and after which no other method is called.
type Poller interface {
	// Register adds fd for edge-triggered read and write readiness. A
	// condition already true when fd is added must be reported (epoll and
	// kqueue both check on insertion).
	Register(fd int) error
	// Deregister removes fd.
	Deregister(fd int) error
	// Wait fills events with readiness reports: it blocks forever when
	// timeout is negative, not at all when it is zero, else up to timeout
	// (rounded up to the poller's resolution). It returns early, with
	// whatever it has (possibly nothing), when Wake is called or a signal
	// interrupts it; wake-ups are consumed and never reported as events.
	Wait(events []Event, timeout time.Duration) (int, error)
	// Wake makes a blocked Wait return, or the next one if none is blocked.
	Wake() error
	// Close releases the poller's descriptors.
	Close() error
}
