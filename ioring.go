package blitz

import (
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/iodriver"
	"github.com/blitz-go/blitz/internal/timerdriver"
)

// ioRing is a ring of the I/O driver (package internal/iodriver) as the
// runtime's sockets see it: the ring, the runtime it serves, and the
// armed receives of its read pool. A socket holds the ioRing of its home
// ring (netFD.ring) for its life. Made by New, one per ring, before any
// socket exists; immutable afterwards but for arms.
type ioRing struct {
	*iodriver.Ring
	// rt is the runtime the ring serves. Immutable.
	rt *Runtime
	// arms are the ring's armed receives (see recvArm). Guarded by its
	// own mutex.
	arms armTable
}

// newIORings makes the ioRing of each of rt.io's rings, in index order,
// and hands the driver the delivery of their armed receives. Called once
// by New, before any socket exists.
func newIORings(rt *Runtime) []*ioRing {
	rings := make([]*ioRing, len(rt.io.Rings()))
	for i, r := range rt.io.Rings() {
		rings[i] = &ioRing{Ring: r, rt: rt}
	}
	rt.io.SetArmed(func(r *iodriver.Ring, cx *future.Context, c *backend.Completion) {
		rings[r.Index()].armComplete(cx, c)
	})
	return rings
}

// home picks the ring of a new socket, round-robin (iodriver.Driver.Home).
// rt.io must not be nil. Any goroutine.
func (rt *Runtime) home() *ioRing { return rt.rings[rt.io.Home().Index()] }

// blockingDriver is the scheduler's Driver when the runtime has I/O: the
// timers and the I/O driver, and the Blocker that parks a worker in the
// backend's Wait (the I/O driver's TryAcquire, Covers, Release, Block and
// Unpark).
type blockingDriver struct {
	timers *timerdriver.Driver
	*iodriver.Driver
}

// Maintain fires due timers and collects ready completions.
func (d blockingDriver) Maintain(cx *future.Context) time.Duration {
	next := d.timers.Maintain(cx)
	d.Driver.Poll(cx)
	return next
}
