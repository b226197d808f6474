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
	// PeerClosed: the descriptor's peer has closed its side (EPOLLRDHUP,
	// kqueue's EV_EOF), which a Poller that reports edges per arrival
	// must say (see EdgePerArrival).
	PeerClosed bool
}

// EdgePerArrival is implemented by a Poller that reports a stream socket
// readable at every arrival of data, not only when it turns readable (as
// epoll's EPOLLET does), and sets PeerClosed on every event that finds the
// peer's side closed. Its reactor then lets an armed receive whose last
// read emptied the socket wait for the next event instead of reading
// first: the read that would find nothing is saved, one system call per
// message on a connection that answers each one.
type EdgePerArrival interface {
	EdgePerArrival() bool
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
