//go:build linux

package uring

import (
	"time"

	"github.com/blitz-go/blitz/backend"
)

var _ backend.Pollable = (*Backend)(nil)

// PollFD returns the ring's descriptor: io_uring polls it readable when the
// completion queue holds a CQE (or overflowed), which includes the wake CQE
// of Wake and the CQEs of linked timeouts, so the ring keeps no deadline in
// user space.
func (b *Backend) PollFD() (backend.FD, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fdsGone {
		return backend.InvalidFD, false
	}
	return backend.FD(b.r.fd), true
}

// StartPolling pushes what is queued and makes every later Submit push its
// SQE itself until StopPolling. It returns -1: every deadline of the ring is
// a kernel timeout, whose CQE makes PollFD readable.
//
// A completion the kernel finishes as task work of another thread (with
// COOP_TASKRUN, the thread that submitted the request) is posted when that
// thread next enters the kernel; until then PollFD stays quiet, as the ring
// would be for a Wait on this thread.
func (b *Backend) StartPolling() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.polling.Store(true)
	if !b.closing {
		_ = b.r.submit() // an error shows again at the Wait that follows
	}
	return -1
}

// StopPolling lets Submit batch again.
func (b *Backend) StopPolling() {
	b.polling.Store(false)
}

// pushesAtOnce reports whether a submission must reach the kernel now:
// somebody waits for completions, in Wait or in Go's poller. Read under mu
// (Submit, ReleaseBuffer) or by the harvest.
func (b *Backend) pushesAtOnce() bool {
	return b.waiting.Load() || b.polling.Load()
}
