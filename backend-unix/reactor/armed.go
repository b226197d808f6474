//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"errors"
	"math"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// Armed receives (backend.RecvArmer): the descriptor's record holds the
// key and the group; when the descriptor polls readable and no recv op
// waits before it, the reactor reads into a buffer of the group taken only
// then, and posts the completion keyed by the key.

var (
	errArmed  = errors.New("a receive is already armed on the descriptor")
	errArmKey = errors.New("key wider than backend.ArmKeyBits")
)

var _ backend.RecvArmer = (*Reactor)(nil)

// ArmRecv arms a receive on fd into a buffer of group (see
// backend.RecvArmer). When data (or end of stream, or an error) waits
// already, the completion is posted at once.
func (r *Reactor) ArmRecv(fd backend.FD, group uint16, key uint64) error {
	if fd > math.MaxInt32 {
		return backend.NewError("arm recv", backend.ErrInvalid, errBadFD)
	}
	if key>>backend.ArmKeyBits != 0 {
		return backend.NewError("arm recv", backend.ErrInvalid, errArmKey)
	}
	if r.groups.get(group) == nil {
		return backend.NewError("arm recv", backend.ErrInvalid, errNoGroup)
	}
	fs := r.fds.get(int(fd), true)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if r.closed.Load() { // under fs.mu: Close's sweep of fs comes after, or saw nothing armed
		return backend.ErrClosed
	}
	if fs.armed {
		return backend.NewError("arm recv", backend.ErrInvalid, errArmed)
	}
	fs.armed, fs.armGroup, fs.armKey = true, group, key
	if fs.readEmpty() && fs.readsFirst() {
		r.runArmed(fs, int(fd))
		if !fs.armed {
			return nil
		}
	}
	if !fs.registered {
		if err := r.poller.Register(int(fd)); err != nil {
			fs.armed = false
			return unixio.Error("arm recv", err)
		}
		fs.registered = true
		// Data that came between the attempt and the registration makes
		// the registration report readable (the poller reports the state
		// a new registration finds).
	}
	return nil
}

// runArmed makes the armed receive's attempt: a completion when data, end
// of stream or an error waits, nothing on EAGAIN. fs.mu is held.
func (r *Reactor) runArmed(fs *fdState, fd int) {
	g := r.groups.get(fs.armGroup)
	var c backend.Completion
	id, ok := g.Take()
	if !ok {
		// No buffer: ErrNoBuffers if data waits, end of stream as such.
		op := backend.Op{Kind: backend.KindRecv}
		var again bool
		if c, again = peekNoBuffer(fd, &op); again {
			return
		}
	} else {
		buf := g.Buffer(id)
		n, err := read(fd, buf)
		switch {
		case err != nil && unixio.IsAgain(err):
			g.Put(id)
			fs.drained = r.edgePerArrival
			return
		case err != nil:
			g.Put(id)
			c.Err = unixio.Error("recv", err)
		case n == 0:
			g.Put(id)
		default:
			// A stream socket read short has nothing left: what comes
			// next brings an event.
			fs.drained = r.edgePerArrival && n < len(buf)
			c = backend.Completion{N: n, Flags: backend.HasBuffer, BufferID: id}
		}
	}
	r.disarm(fs, c)
}

// disarm ends fs's armed receive, if any, with c. fs.mu is held.
func (r *Reactor) disarm(fs *fdState, c backend.Completion) {
	if !fs.armed {
		return
	}
	fs.armed = false
	c.UserData = fs.armKey
	if c.Err != nil || c.FD == 0 {
		c.FD = backend.InvalidFD
	}
	r.mu.Lock()
	r.ready.push(c)
	r.kickForPostLocked()
	r.mu.Unlock()
}

// CancelRecv ends fd's armed receive with ErrCanceled (see
// backend.RecvArmer).
func (r *Reactor) CancelRecv(fd backend.FD) error {
	if fd > math.MaxInt32 {
		return backend.ErrNotFound
	}
	fs := r.fds.get(int(fd), false)
	if fs == nil {
		return backend.ErrNotFound
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.armed {
		return backend.ErrNotFound
	}
	r.disarm(fs, backend.Completion{Err: backend.ErrCanceled})
	return nil
}
