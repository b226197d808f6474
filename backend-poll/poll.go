//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package poll

import (
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend-unix/reactor"
)

// Backend is the poll(2) backend: package reactor's completion emulation
// over a poller that polls the descriptors with ops waiting on them.
type Backend struct {
	*reactor.Reactor
	p *poller
}

var (
	_ backend.Backend      = (*Backend)(nil)
	_ backend.RecvArmer    = (*Backend)(nil)
	_ backend.EnterCounter = (*Backend)(nil)
)

// Name returns "poll".
func (*Backend) Name() string { return "poll" }

// New makes a poll backend.
func New() (backend.Backend, error) {
	p, err := newPoller()
	if err != nil {
		return nil, err
	}
	return &Backend{Reactor: reactor.New(p), p: p}, nil
}

// Submit starts op (see backend.Backend) and counts it as waiting on its
// side of its descriptor until Wait hands out its final completion. Any
// goroutine.
func (b *Backend) Submit(op *backend.Op) error {
	if op == nil {
		return b.Reactor.Submit(op) // ErrInvalid
	}
	// Read before Submit: from then on the op is the backend's, and a
	// Wait on another goroutine may hand it back to a caller who reuses it.
	fd, ev := int(op.FD), sides(op)
	if err := b.Reactor.Submit(op); err != nil {
		return err
	}
	// Counted after the reactor took the op: an op that has to wait is in
	// its queue by now, so a report this count asks for finds it there.
	b.p.count(fd, ev, 1)
	return nil
}

// Wait returns ready completions, waiting for them as timeout says (see
// backend.Backend), and uncounts the ops whose final completions it
// returns. One goroutine at a time.
func (b *Backend) Wait(out []backend.Completion, timeout time.Duration) (int, error) {
	n, err := b.Reactor.Wait(out, timeout)
	b.p.completed(out[:n])
	return n, err
}

// ArmRecv arms a receive on fd (see backend.RecvArmer), counted as a
// reader of fd until Wait hands out its completion. Keys must differ
// among the receives in flight, as their completions are told apart by
// them. Any goroutine.
func (b *Backend) ArmRecv(fd backend.FD, group uint16, key uint64) error {
	track := b.p.armStart(key, int(fd))
	err := b.Reactor.ArmRecv(fd, group, key)
	if track {
		b.p.armDone(key, err == nil)
	}
	return err
}
