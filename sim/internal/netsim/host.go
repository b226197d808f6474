package netsim

import (
	"cmp"
	"net/netip"
	"slices"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// Ephemeral ports are picked in this range, in order, skipping those taken.
const (
	firstEphemeral = 40000
	lastEphemeral  = 60999
)

// portKey names a bound port: stream and datagram ports are apart.
type portKey struct {
	typ  backend.SockType
	port uint16
}

// connKey names a TCP connection end on its host: its local and remote
// address and port.
type connKey struct{ local, remote netip.AddrPort }

// Host is one simulated machine: an address, a disk, and the backend of
// its current incarnation (the runtime running on it). All its state is
// guarded by World.mu.
type Host struct {
	w    *World
	name string
	addr netip.Addr
	// events are the host's pending events (see World.advance).
	events eventHeap
	// be is the backend of the current incarnation; after Crash or Kill
	// it is the dead one until Restart.
	be *simBackend
	// incarnation counts boots.
	incarnation int
	// down is set by Crash until Restart: traffic to the host is lost.
	down bool
	// disk keeps the host's files across incarnations.
	disk *Disk
	// ports are the bound ports; conns the TCP connection ends, whether
	// accepted or still waiting in a listener's backlog.
	ports    map[portKey]*socket
	conns    map[connKey]*endpoint
	nextPort uint16
}

// newHost makes a host with an empty disk and no backend yet.
func newHost(w *World, name string, addr netip.Addr) *Host {
	h := &Host{
		w: w, name: name, addr: addr,
		ports:    make(map[portKey]*socket),
		conns:    make(map[connKey]*endpoint),
		nextPort: firstEphemeral,
	}
	h.disk = newDisk(h)
	return h
}

// Name returns the host's name.
func (h *Host) Name() string { return h.name }

// Addr returns the host's address.
func (h *Host) Addr() netip.Addr { return h.addr }

// Disk returns the host's disk, which survives crashes and restarts.
func (h *Host) Disk() *Disk { return h.disk }

// Backend returns the backend of the host's current incarnation. After
// Crash or Kill it is the dead incarnation's (every call fails with
// ErrClosed) until Restart makes a new one.
func (h *Host) Backend() backend.Backend {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	return h.be
}

// Up reports whether the host is up (not crashed).
func (h *Host) Up() bool {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	return !h.down
}

// boot starts a new incarnation with a fresh backend.
func (h *Host) boot() {
	h.incarnation++
	h.down = false
	h.be = newBackend(h)
}

// Crash is a power loss: the host goes down at once, without a word to
// its peers. Its sockets vanish silently (peers notice only when they next
// send, by a reset once the host is back, or by their own timeouts);
// traffic to it is lost until Restart (TCP segments are held, as a peer
// retransmitting them, see SetTCPTimeout); the backend dies (its ops
// complete with ErrClosed, then its Wait returns ErrClosed); and the disk
// keeps only what was synced (see Disk).
func (h *Host) Crash() {
	h.w.locked(func() {
		if h.down {
			return
		}
		h.w.emitf(h, "crash", "incarnation %d", h.incarnation)
		h.down = true
		h.dropSockets(false)
		h.be.die()
		h.disk.crash()
	})
}

// Kill is the death of the host's process while the machine stays up: the
// kernel closes its sockets by resetting every connection (peers see
// ECONNRESET after the latency; connects to its ports are refused), the
// backend dies as in Crash, and the disk keeps everything written, synced
// or not (it is in the kernel's page cache).
func (h *Host) Kill() {
	h.w.locked(func() {
		if h.down || h.be.dead {
			return
		}
		h.w.emitf(h, "kill", "incarnation %d", h.incarnation)
		h.dropSockets(true)
		h.be.die()
	})
}

// Restart brings the host up again with a new incarnation: Backend then
// returns a fresh backend, no sockets are open, and the disk's durable
// files are there. A running host is killed first. Segments held for the
// host are sent; arriving at no connection, they draw resets.
func (h *Host) Restart() {
	h.w.locked(func() {
		if !h.down && !h.be.dead {
			h.dropSockets(true)
			h.be.die()
		}
		h.boot()
		h.w.emitf(h, "restart", "incarnation %d", h.incarnation)
		h.w.flushHeld()
	})
}

// dropSockets takes every socket of the host away: connection ends are
// reset toward their peers if rst, else dropped silently.
func (h *Host) dropSockets(rst bool) {
	for _, ep := range h.sortedConns() {
		if rst {
			h.w.sendRst(ep.host, ep.local, ep.remote)
		}
		ep.held, ep.sock = nil, nil // nothing more leaves the dead incarnation
		h.w.forget(ep)
	}
	clear(h.ports)
	if b := h.be; b != nil {
		for _, s := range b.sortedSockets() {
			s.dead = true
		}
	}
}

// sortedConns returns the host's connection ends in a fixed order.
func (h *Host) sortedConns() []*endpoint {
	eps := make([]*endpoint, 0, len(h.conns))
	for _, ep := range h.conns {
		eps = append(eps, ep)
	}
	slices.SortFunc(eps, func(a, b *endpoint) int { return cmp.Compare(a.id, b.id) })
	return eps
}

// ephemeral picks a free port of type typ, or 0 when all are taken.
func (h *Host) ephemeral(typ backend.SockType) uint16 {
	for range lastEphemeral - firstEphemeral + 1 {
		p := h.nextPort
		h.nextPort++
		if h.nextPort > lastEphemeral {
			h.nextPort = firstEphemeral
		}
		if h.ports[portKey{typ, p}] == nil {
			return p
		}
	}
	return 0
}

// Due reports whether the host has something for its runtime now: a
// completion ready, or an event due at the current time. A driver polling
// several hosts may skip, for this step, the backend's Wait of a host that
// has nothing due (nothing changes for it until time moves or another
// host's event reaches it, which makes it due).
func (h *Host) Due() bool {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := h.be; b != nil && len(b.ready) > 0 {
		return true
	}
	e := h.events.top(w)
	return e != nil && !e.at.After(time.Now())
}
