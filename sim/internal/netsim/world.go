package netsim

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"
)

// Default network parameters of a new World.
const (
	// DefaultMinLatency and DefaultMaxLatency bound the one-way latency
	// of a segment or datagram, drawn uniformly for each.
	DefaultMinLatency = 50 * time.Microsecond
	DefaultMaxLatency = 500 * time.Microsecond
	// DefaultConnectTimeout is how long a connect nobody answers waits
	// before it fails with ETIMEDOUT (see SetConnectTimeout).
	DefaultConnectTimeout = 10 * time.Second
)

// Event is one step of the model, for a trace (SetTrace): its virtual time,
// the host it happened on, what happened ("connect", "deliver", "drop",
// "complete", "crash", ...) and a deterministic detail such as
// "tcp 10.0.0.1:40000->10.0.0.2:80 data 512B".
//
// Detail is the world's buffer, valid only during the trace call: the
// next event's detail is built in it. A trace that keeps it copies it
// (string(e.Detail), or String).
type Event struct {
	Time   time.Time
	Host   string
	Kind   string
	Detail []byte
}

// String formats the event on one line (a copy: see Detail).
func (e Event) String() string {
	return fmt.Sprintf("%s %s %s %s", e.Time.Format("15:04:05.000000000"), e.Host, e.Kind, e.Detail)
}

// latRange is a uniform latency range.
type latRange struct{ min, max time.Duration }

// link names an unordered pair of hosts (a <= b).
type link struct{ a, b string }

// mkLink returns the link of hosts x and y.
func mkLink(x, y string) link {
	if y < x {
		x, y = y, x
	}
	return link{x, y}
}

// dir names one direction of a link, from src to dst.
type dir struct{ src, dst string }

// World is the simulated network: its hosts, the links between them and
// their faults, and the events still to happen. Every method and every
// method of the hosts' backends may be called from any goroutine; one
// mutex serializes the model, which has no goroutine of its own: it runs
// the events that are due whenever it is called (see advance).
type World struct {
	// mu guards everything below and everything the hosts, their
	// backends, sockets and disks hold.
	mu sync.Mutex
	// rng makes every random choice of the model.
	rng *rand.Rand
	// clock is the model's time: an event's time while it runs, else the
	// time.Now of the last call.
	clock time.Time
	// seq numbers scheduled events.
	seq uint64
	// hosts in the order they were added; byName and byAddr index them.
	hosts  []*Host
	byName map[string]*Host
	byAddr map[netip.Addr]*Host
	// trace receives every Event, if set; details are built in dbuf,
	// reused from one event to the next (see detail).
	trace func(Event)
	dbuf  []byte

	// Free lists of the model's records, reused to spare the garbage
	// collector a run's worth of them: events run or dropped
	// (freeEvent), pendings finished (freePending), segments delivered
	// (freeSeg).
	freeEvents   []*event
	freePendings []*pending
	freeSegs     []*segment
	// iov is the one-buffer vector of a KindRecv or KindSend (opBufs);
	// it is valid until the next call of opBufs.
	iov [1][]byte

	// Network parameters, set by the Set methods.
	lat            latRange
	linkLat        map[link]latRange
	loss, dup      float64
	reorder        float64
	bandwidth      int64
	connectTimeout time.Duration
	tcpTimeout     time.Duration
	// cut holds the partitioned links.
	cut map[link]bool
	// busyUntil is when each link direction is free again (bandwidth).
	busyUntil map[dir]time.Time
	// lastDgram is the latest arrival of an in-order datagram on each
	// direction, so that datagrams keep their order unless reordered.
	lastDgram map[dir]time.Time
	// holding are the connection ends with segments held back by a
	// partition or a down host, in the order they began holding.
	holding []*endpoint
}

// NewWorld returns an empty world whose random choices all come from rng.
func NewWorld(rng *rand.Rand) *World {
	return &World{
		rng:            rng,
		clock:          time.Now(),
		byName:         make(map[string]*Host),
		byAddr:         make(map[netip.Addr]*Host),
		lat:            latRange{DefaultMinLatency, DefaultMaxLatency},
		linkLat:        make(map[link]latRange),
		connectTimeout: DefaultConnectTimeout,
		cut:            make(map[link]bool),
		busyUntil:      make(map[dir]time.Time),
		lastDgram:      make(map[dir]time.Time),
	}
}

// AddHost adds a host called name with address addr, up, with an empty
// disk and a backend. It panics if the name or the address is taken, or
// the address is invalid, unspecified or loopback.
func (w *World) AddHost(name string, addr netip.Addr) *Host {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	addr = addr.Unmap()
	switch {
	case w.byName[name] != nil:
		panic("netsim: duplicate host name " + name)
	case !addr.IsValid() || addr.IsUnspecified() || addr.IsLoopback():
		panic(fmt.Sprintf("netsim: host %s: bad address %v", name, addr))
	case w.byAddr[addr] != nil:
		panic(fmt.Sprintf("netsim: host %s: address %v taken by %s", name, addr, w.byAddr[addr].name))
	}
	h := newHost(w, name, addr)
	w.hosts = append(w.hosts, h)
	w.byName[name] = h
	w.byAddr[addr] = h
	h.boot()
	w.emitf(h, "boot", "%v", addr)
	return h
}

// Host returns the host called name, or nil.
func (w *World) Host(name string) *Host {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byName[name]
}

// NextEvent returns the time of the earliest pending event of any host,
// and false when none is pending: the driver loop sleeps until then.
func (w *World) NextEvent() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	if e := w.next(); e != nil {
		return e.at, true
	}
	return time.Time{}, false
}

// SetTrace makes f receive every Event from now on (nil: none). f runs
// with the world locked: it must not call back into the world.
func (w *World) SetTrace(f func(Event)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trace = f
}

// tracing reports whether events are traced (SetTrace): only then are
// their details built.
func (w *World) tracing() bool { return w.trace != nil }

// detail returns the detail buffer, empty, for an event's detail to be
// appended to and handed to emitDetail. Call it only when tracing.
func (w *World) detail() []byte { return w.dbuf[:0] }

// emitDetail traces an event of host h at the model clock, with the
// detail d built in the buffer from detail.
func (w *World) emitDetail(h *Host, kind string, d []byte) {
	w.dbuf = d[:0] // keep what it grew to
	w.trace(Event{Time: w.clock, Host: h.name, Kind: kind, Detail: d})
}

// emit traces an event of host h at the model clock, its detail the
// concatenation of parts.
func (w *World) emit(h *Host, kind string, parts ...string) {
	if !w.tracing() {
		return
	}
	d := w.detail()
	for _, p := range parts {
		d = append(d, p...)
	}
	w.emitDetail(h, kind, d)
}

// emitf traces an event of host h whose detail is formatted as by
// fmt.Sprintf: for rare events (its arguments are boxed even when
// nothing is traced).
func (w *World) emitf(h *Host, kind, format string, args ...any) {
	if w.tracing() {
		w.emitDetail(h, kind, fmt.Appendf(w.detail(), format, args...))
	}
}

// locked runs f with the world locked and its due events run.
func (w *World) locked(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	f()
}

// SetLatency sets the one-way latency of every link without its own
// (SetLinkLatency): uniform in [min, max], drawn per segment or datagram.
func (w *World) SetLatency(min, max time.Duration) {
	w.locked(func() { w.lat = checkRange(min, max) })
}

// SetLinkLatency sets the latency between hosts a and b (both directions;
// a == b sets a host's loopback latency).
func (w *World) SetLinkLatency(a, b string, min, max time.Duration) {
	w.locked(func() { w.linkLat[mkLink(a, b)] = checkRange(min, max) })
}

// checkRange returns the range [min, max], panicking on a bad one.
func checkRange(min, max time.Duration) latRange {
	if min < 0 || max < min {
		panic(fmt.Sprintf("netsim: bad latency range [%v, %v]", min, max))
	}
	return latRange{min, max}
}

// SetLoss sets the probability that a datagram is lost. TCP is reliable
// and unaffected.
func (w *World) SetLoss(p float64) { w.locked(func() { w.loss = p }) }

// SetDuplicate sets the probability that a datagram is delivered twice.
func (w *World) SetDuplicate(p float64) { w.locked(func() { w.dup = p }) }

// SetReorder sets the probability that a datagram ignores the order of
// its link direction: its arrival is drawn on its own and may overtake
// datagrams sent before it. TCP stays ordered.
func (w *World) SetReorder(p float64) { w.locked(func() { w.reorder = p }) }

// SetBandwidth limits every link direction to bytesPerSecond (0: no
// limit): a segment or datagram of n bytes occupies its direction for
// n/bytesPerSecond, after those sent before it, then travels with the
// link's latency.
func (w *World) SetBandwidth(bytesPerSecond int64) {
	w.locked(func() { w.bandwidth = max(bytesPerSecond, 0) })
}

// SetConnectTimeout sets how long a connect waits for an answer before it
// fails with ETIMEDOUT (its SYNs, sent again after 1 s, 2 s, 4 s, ...,
// lost in a partition or at a down host, or their answer held). It
// applies to connects started from now.
func (w *World) SetConnectTimeout(d time.Duration) {
	w.locked(func() { w.connectTimeout = d })
}

// SetTCPTimeout sets how long a TCP connection keeps segments held back
// by a partition or a down host before its sending end gives up: its ops
// fail with ETIMEDOUT and the connection is gone (the other end learns of
// it by a reset when it next sends, after the heal). 0, the default, keeps
// them until the heal, however long. It applies to segments held from now.
func (w *World) SetTCPTimeout(d time.Duration) {
	w.locked(func() { w.tcpTimeout = max(d, 0) })
}

// Partition cuts every link between a host of groupA and one of groupB,
// both ways. Datagrams sent across a cut are lost; TCP segments are held
// (as retransmissions would be) until the link heals, or until the TCP
// timeout (SetTCPTimeout); a connect's SYNs are lost and retried until
// the heal or the connect timeout. Segments already
// on their way when the cut is made still arrive.
func (w *World) Partition(groupA, groupB []string) {
	w.locked(func() {
		for _, a := range groupA {
			for _, b := range groupB {
				if a != b {
					w.cut[mkLink(a, b)] = true
					w.emit(w.mustHost(a), "partition", a, "|", b)
				}
			}
		}
	})
}

// Heal removes every partition; held TCP segments are sent at once.
func (w *World) Heal() {
	w.locked(func() {
		clear(w.cut)
		if len(w.hosts) > 0 {
			w.emit(w.hosts[0], "heal", "all")
		}
		w.flushHeld()
	})
}

// HealLink removes the partition between hosts a and b.
func (w *World) HealLink(a, b string) {
	w.locked(func() {
		delete(w.cut, mkLink(a, b))
		w.emit(w.mustHost(a), "heal", a, "|", b)
		w.flushHeld()
	})
}

// ResetConnections resets every TCP connection between hosts a and b, as a
// middlebox would: both ends see ECONNRESET at once.
func (w *World) ResetConnections(a, b string) {
	w.locked(func() {
		ha, hb := w.mustHost(a), w.mustHost(b)
		for _, ep := range ha.sortedConns() {
			if ep.peerHost == hb {
				w.resetBoth(ep)
			}
		}
		if ha != hb {
			for _, ep := range hb.sortedConns() {
				if ep.peerHost == ha {
					w.resetBoth(ep)
				}
			}
		}
	})
}

// mustHost returns the host called name, panicking if there is none.
func (w *World) mustHost(name string) *Host {
	h := w.byName[name]
	if h == nil {
		panic("netsim: no host " + name)
	}
	return h
}

// blocked reports whether traffic from src to dst cannot pass now: a
// partition between them, or dst down.
func (w *World) blocked(src, dst *Host) bool {
	return dst.down || src.down || w.cut[mkLink(src.name, dst.name)]
}

// latency draws the one-way latency from src to dst.
func (w *World) latency(src, dst *Host) time.Duration {
	r, ok := w.linkLat[mkLink(src.name, dst.name)]
	if !ok {
		r = w.lat
	}
	if r.max == r.min {
		return r.min
	}
	return r.min + time.Duration(w.rng.Int64N(int64(r.max-r.min)+1))
}

// arrival returns when n bytes sent now from src reach dst: after the
// direction is free and has carried them (bandwidth), plus the latency.
func (w *World) arrival(src, dst *Host, n int) time.Time {
	start := w.clock
	if w.bandwidth > 0 {
		d := dir{src.name, dst.name}
		if t := w.busyUntil[d]; t.After(start) {
			start = t
		}
		start = start.Add(time.Duration(int64(n) * int64(time.Second) / w.bandwidth))
		w.busyUntil[d] = start
	}
	return start.Add(w.latency(src, dst))
}

// chance draws true with probability p.
func (w *World) chance(p float64) bool {
	return p > 0 && w.rng.Float64() < p
}

// route returns the host that address a reaches from src, or nil: src
// itself for a loopback or unspecified address or its own.
func (w *World) route(src *Host, a netip.Addr) *Host {
	a = a.Unmap()
	if a.IsLoopback() || a.IsUnspecified() || a == src.addr {
		return src
	}
	return w.byAddr[a]
}
