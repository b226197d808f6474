package blitz

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// ErrClosed is the error of an operation on a socket that was closed, or
// that was closed under it. It matches net.ErrClosed.
var ErrClosed = fmt.Errorf("blitz: %w", net.ErrClosed)

// ErrNoIO is the error of a network operation on a runtime started with
// BackendNone, or polled outside any runtime.
var ErrNoIO = errors.New("blitz: no I/O backend")

// errRuntimeDown is the error of an operation on a socket whose runtime
// shut down: the socket is as good as closed, so it matches ErrClosed (and
// net.ErrClosed, as the errors of Go's own closed sockets do) and says why
// with ErrShutdown.
var errRuntimeDown = fmt.Errorf("%w (%w)", ErrClosed, ErrShutdown)

// netFD is a socket of the runtime's backend: what TCP, UDP and Unix
// sockets share. Its fields are immutable after creation except the
// atomics.
type netFD struct {
	// ring is the socket's home (and through its driver, the runtime's): every op, the close and the pooled
	// buffers of the socket go to its backend (see iodriver.Driver).
	ring *ioRing
	fd   backend.FD
	// ext holds what few sockets need, made at the first need: the
	// socket's addresses (nil until first needed for an accepted
	// connection, see addresses, which so does not carry them while it
	// only serves; set at creation for the other sockets) and its
	// timeouts.
	ext atomic.Pointer[netExt]
	// peerIP is an accepted IP connection's peer address (its port and
	// family are in hints), read at the accept, the one address that a
	// reset connection can no longer tell (its local one it can): so
	// RemoteAddr never loses it. Immutable.
	peerIP [16]byte
	// hints holds the socket's flags (fdClosed, fdReadHot, fdNoFast,
	// fdReadShut), set and cleared with atomic Or and And, read with Load
	// by the read and write paths; and, written at creation, the family
	// and port of peerIP and, in its top byte, the socket's netKind.
	hints atomic.Uint32
	// users counts the operations between their check of closed and the
	// moment the backend has the op (or the system call returned): the
	// descriptor number must not be released under them, or it could be
	// reused by a new socket and the late op land on it. close marks it
	// closing; the last done after that releases the descriptor. See use
	// and done. Beside hints, it fills the word after peerIP, so that the
	// record is 112 bytes, a size class of its own.
	users useCount
	// rd and wr hold the socket's read-side op (recv, recvfrom, accept)
	// and write-side op (send, sendto, connect): at most one of each is in
	// flight, and a cancelled one stays in its slot until it completes (see
	// ioSlot). Each is a handle: the op record is attached only while an
	// op uses it (see ioSlot), so an idle connection, which only waits to
	// read (through an armed receive where the backend has them, see
	// recvArm), holds none.
	rd, wr ioSlot
	// arm is the socket's armed receive, which a pooled read waits on
	// instead of an op in rd where the backend arms receives (see recvArm).
	arm recvArm
}

// The flags of netFD.hints.
const (
	// fdReadHot says the next read should try the backend's fast path
	// first (TryRecv): set when a read filled a whole buffer of at least
	// hotReadSize bytes (a bulk transfer) or a TryRecv found data, cleared
	// when a TryRecv found none. So a stream that is being drained reads
	// with one system call and no op, and a connection that waits for its
	// peer does not pay a failed attempt before each op.
	fdReadHot uint32 = 1 << iota
	// fdNoFast is set when the backend has no fast path (ErrUnsupported).
	fdNoFast
	// fdReadShut is set by CloseRead: later reads return io.EOF.
	fdReadShut
	// fdClosed is set by the first Close; later operations fail with
	// ErrClosed, and operations that were in flight complete with it.
	fdClosed
)

// The peer's family (peerV4, peerV6; none: 0) and port in netFD.hints,
// written at creation.
const (
	peerFamilyShift        = 4
	peerV4          uint32 = 1 << peerFamilyShift
	peerV6          uint32 = 2 << peerFamilyShift
	peerFamilyMask         = 3 << peerFamilyShift
	peerPortShift          = 8
)

// isClosed reports whether the socket was closed (fdClosed). Any
// goroutine or task may call it.
func (n *netFD) isClosed() bool { return n.hint(fdClosed) }

// kindShift is the place of the netKind in netFD.hints.
const kindShift = 24

// netKind is a socket's network, as Go's net package names it.
type netKind uint8

const (
	kindTCP netKind = iota
	kindUDP
	kindUnix
	kindUnixgram
)

// networks are the names of the netKinds.
var networks = [...]string{kindTCP: "tcp", kindUDP: "udp", kindUnix: "unix", kindUnixgram: "unixgram"}

// kindOf returns the netKind of a network name ("tcp", "unix", ...).
func kindOf(network string) netKind {
	for k, name := range networks {
		if name == network {
			return netKind(k)
		}
	}
	return kindTCP
}

// network returns the socket's network: "tcp", "udp", "unix" or
// "unixgram", for errors and net.Addr.
func (n *netFD) network() string { return networks[netKind(n.hints.Load()>>kindShift)] }

// sockAddrs are a socket's local and peer addresses.
type sockAddrs struct {
	local, peer backend.Addr
}

// noAddrs stands for the addresses of a socket closed before they were
// read.
var noAddrs sockAddrs

// addresses returns the socket's addresses, reading them from the system
// on the first call for an accepted connection (so that a connection that
// never asks costs neither the memory nor the system calls). Once the
// socket is closed they can no longer be read: the zero addresses stand
// in (close reads them first, see close). Any goroutine or task may call
// it.
func (n *netFD) addresses() *sockAddrs {
	if a := n.knownAddrs(); a != nil {
		return a
	}
	if !n.users.acquire() { // closed: the descriptor may be another socket's by now
		if a := n.knownAddrs(); a != nil {
			return a
		}
		return &noAddrs
	}
	a := new(sockAddrs)
	a.local, _ = n.ring.Backend().LocalAddr(n.fd)
	if peer, ok := n.peer(); ok {
		a.peer = backend.AddrPort(peer)
	} else {
		a.peer, _ = n.ring.Backend().PeerAddr(n.fd)
	}
	n.done()
	e := n.extOrNew()
	if !e.addrs.CompareAndSwap(nil, a) { // publishes a to knownAddrs' Load
		a = e.addrs.Load()
	}
	return a
}

// knownAddrs returns the socket's addresses if they were read or set,
// else nil. Any goroutine or task may call it.
func (n *netFD) knownAddrs() *sockAddrs {
	if e := n.ext.Load(); e != nil { // load-acquire: pairs with extOrNew's CompareAndSwap
		return e.addrs.Load() // load-acquire: pairs with addresses' CompareAndSwap and setAddrs' Store
	}
	return nil
}

// setAddrs sets the socket's addresses (a new socket's, a datagram
// socket's after Connect).
func (n *netFD) setAddrs(local, peer backend.Addr) {
	n.extOrNew().addrs.Store(&sockAddrs{local: local, peer: peer}) // publishes to knownAddrs' Load
}

// netExt is what few sockets need (see netFD.ext).
type netExt struct {
	addrs    atomic.Pointer[sockAddrs]
	timeouts sockTimeouts
}

// extOrNew returns n's ext, making it at the first call.
func (n *netFD) extOrNew() *netExt {
	if e := n.ext.Load(); e != nil {
		return e
	}
	e := new(netExt)
	if n.ext.CompareAndSwap(nil, e) { // publishes e to the Loads of ext
		return e
	}
	return n.ext.Load()
}

// peer returns an accepted IP connection's peer address as the accept
// read it; ok is false for another socket.
func (n *netFD) peer() (ap netip.AddrPort, ok bool) {
	h := n.hints.Load()
	if h&peerFamilyMask == 0 {
		return ap, false
	}
	a := netip.AddrFrom16(n.peerIP)
	if h&peerFamilyMask == peerV4 {
		a = a.Unmap()
	}
	return netip.AddrPortFrom(a, uint16(h>>peerPortShift)), true
}

// setPeer keeps ap as the peer of a new socket, before it is shared; it
// reports false for an address with a zone, which it does not keep.
func (n *netFD) setPeer(ap netip.AddrPort) bool {
	a := ap.Addr()
	if a.Zone() != "" || !a.IsValid() {
		return false
	}
	fam := peerV6
	if a.Is4() {
		fam = peerV4
	}
	n.peerIP = a.As16()
	n.hints.Store(n.hints.Load() | fam | uint32(ap.Port())<<peerPortShift) // before n is shared
	return true
}

// hint reports whether flag f of n.hints is set.
func (n *netFD) hint(f uint32) bool { return n.hints.Load()&f != 0 }

// setHint sets or clears flag f of n.hints.
func (n *netFD) setHint(f uint32, on bool) {
	if on {
		n.hints.Or(f)
	} else {
		n.hints.And(^f)
	}
}

// sockTimeouts are a socket's linked timeouts, in nanoseconds (0: none).
type sockTimeouts struct {
	read, write atomic.Int64
}

// readTimeout and writeTimeout return the linked timeout of a read or a
// write op (0: none).
func (n *netFD) readTimeout() time.Duration {
	if e := n.ext.Load(); e != nil { // load-acquire: pairs with extOrNew's CompareAndSwap
		return time.Duration(e.timeouts.read.Load())
	}
	return 0
}
func (n *netFD) writeTimeout() time.Duration {
	if e := n.ext.Load(); e != nil { // load-acquire: pairs with extOrNew's CompareAndSwap
		return time.Duration(e.timeouts.write.Load())
	}
	return 0
}

// hotReadSize is the smallest buffer whose filling makes a stream hot: a
// request/response protocol's small reads would mostly find nothing and pay
// a failed system call before each op.
const hotReadSize = 4096

// trySend sends through the backend's fast path. done is false when the
// caller must submit the op instead (the socket is full, or no fast path).
// A task (force false) skips it where the kernel completes ops natively,
// since submitting is cheaper there; a goroutine in the net.Conn adapter
// (force true) always tries it. Called by the holder of the write slot.
func (n *netFD) trySend(b []byte, force bool) (int, bool, error) {
	if n.hint(fdNoFast) || (!force && n.ring.Driver().Native()) {
		return 0, false, nil
	}
	if !n.use() {
		return 0, true, ErrClosed
	}
	c, err := n.ring.Backend().TrySend(n.fd, b)
	n.done()
	switch {
	case err == nil:
		return c, true, nil
	case errors.Is(err, backend.ErrWouldBlock):
		return 0, false, nil
	case errors.Is(err, backend.ErrUnsupported):
		n.setHint(fdNoFast, true)
		return 0, false, nil
	}
	return 0, true, err
}

// tryRecv reads through the fast path when the stream is hot (see
// fdReadHot), or always with force (the net.Conn adapter, whose alternative
// is a wake from another thread). Called by the holder of the read slot.
func (n *netFD) tryRecv(b []byte, force bool) (int, bool, error) {
	if h := n.hints.Load(); h&fdNoFast != 0 || (!force && h&fdReadHot == 0) {
		return 0, false, nil
	}
	if !n.use() {
		return 0, true, ErrClosed
	}
	c, err := n.ring.Backend().TryRecv(n.fd, b)
	n.done()
	switch {
	case err == nil:
		return c, true, nil
	case errors.Is(err, backend.ErrWouldBlock):
		n.setHint(fdReadHot, false)
		return 0, false, nil
	case errors.Is(err, backend.ErrUnsupported):
		n.setHint(fdNoFast, true)
		return 0, false, nil
	}
	return 0, true, err
}

// writeSlot returns the write-side slot.
func (n *netFD) writeSlot() *ioSlot { return &n.wr }

// ringFor returns the home ring of a new socket of h's runtime. It fails
// with ErrShutdown once the runtime's Shutdown began.
func ringFor(h Handle) (*ioRing, error) {
	rt := h.Runtime()
	if rt.io == nil {
		return nil, ErrNoIO
	}
	if rt.down.Load() {
		return nil, ErrShutdown
	}
	return rt.home(), nil
}

// How newNetFD reads a socket's addresses.
type addrMode uint8

const (
	addrsNow       addrMode = iota // both now (listeners, datagram sockets)
	addrsAccepted                  // an accepted connection's: its IP peer's now, the rest on first use
	addrsAtConnect                 // none: the connect sets them (setAddrs)
)

// newNetFD wraps fd, homed on r, reading its addresses as mode says. An
// accepted connection's are read when first needed (see addresses), but
// for an IP peer's, kept compact now (netFD.peerIP): peer is the address
// the accept's completion carries, or the zero Addr when it carries none
// (a multishot accept), which getpeername then reads.
func newNetFD(r *ioRing, fd backend.FD, kind netKind, mode addrMode, peer backend.Addr) *netFD {
	n := new(netFD)
	n.init(r, fd, kind, mode, peer)
	return n
}

// init is newNetFD on n, a zero netFD that no one else holds yet (one
// allocated with its stream, see acceptedRecord).
func (n *netFD) init(r *ioRing, fd backend.FD, kind netKind, mode addrMode, peer backend.Addr) {
	n.ring, n.fd = r, fd
	n.hints.Store(uint32(kind) << kindShift) // before n is shared
	switch mode {
	case addrsNow:
		local, _ := r.Backend().LocalAddr(fd)
		peer, _ := r.Backend().PeerAddr(fd)
		n.setAddrs(local, peer)
	case addrsAccepted:
		if peer.Family == 0 {
			var err error
			if peer, err = r.Backend().PeerAddr(fd); err != nil {
				break // read when asked
			}
		}
		if !peer.IP.IsValid() {
			break // not IP: read when asked
		}
		if n.setPeer(peer.IP) {
			break
		}
		local, _ := r.Backend().LocalAddr(fd) // a zoned peer (link-local): both now
		n.setAddrs(local, peer)
	}
}

// use registers an operation about to touch the descriptor; it reports
// false once the socket is closed, or once its runtime's Shutdown began
// (the backend is closing, and the fast paths' system calls would still
// work on the descriptor). Every true is paired with a done.
func (n *netFD) use() bool { return !n.rt().down.Load() && n.users.acquire() }

// rt returns the runtime of the socket.
func (n *netFD) rt() *Runtime { return n.ring.rt }

// done ends a use; the last one after a close releases the descriptor.
func (n *netFD) done() {
	if n.users.release() {
		n.release()
	}
}

// close closes the socket once. Operations being started finish starting
// first (use/done); then a KindClose op makes the ops in flight complete
// (with ErrCanceled, reported as ErrClosed) before the descriptor is
// released, so its number cannot be reused under them.
func (n *netFD) close() error {
	if n.knownAddrs() == nil {
		// The last moment the addresses can be read: later errors of the
		// ops in flight name them.
		n.addresses()
	}
	already, busy := n.users.markClosing()
	if already {
		return n.opError("close", ErrClosed)
	}
	n.setHint(fdClosed, true)
	if !busy {
		n.release()
	}
	n.rd.closed(n)
	n.wr.closed(n)
	n.armClosed()
	return nil
}

// release gives the descriptor back, once, when it is closed and unused.
func (n *netFD) release() {
	op := &backend.Op{Kind: backend.KindClose, FD: n.fd}
	if err := n.ring.Submit(op); err != nil {
		// The backend is closed (the runtime shut down): close directly.
		_ = n.ring.Backend().CloseFD(n.fd)
	}
}

// opError wraps err as a *net.OpError naming op and the socket's
// addresses, the error type Go's net code and its users expect; nil stays
// nil. A cancellation caused by Close is reported as ErrClosed; once the
// runtime shut down, a closed socket, a closed backend and a cancellation
// are reported as errRuntimeDown.
func (n *netFD) opError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, backend.ErrCanceled) && n.isClosed() {
		err = ErrClosed
	}
	if n.rt().down.Load() && (errors.Is(err, ErrClosed) || errors.Is(err, backend.ErrClosed) || errors.Is(err, backend.ErrCanceled)) {
		err = errRuntimeDown
	}
	if errors.Is(err, backend.ErrTimeout) {
		err = timeoutError{err}
	}
	nw, a := n.network(), n.addresses()
	return &net.OpError{Op: op, Net: nw, Source: netAddr(nw, a.local), Addr: netAddr(nw, a.peer), Err: err}
}

// errDeadline is what a net.Conn's expired deadline matches.
var errDeadline = os.ErrDeadlineExceeded

// timeoutError marks a linked timeout's expiry as a net.Error timeout that
// also matches os.ErrDeadlineExceeded and ErrTimeout.
type timeoutError struct{ err error }

func (e timeoutError) Error() string   { return "i/o timeout" }
func (e timeoutError) Timeout() bool   { return true }
func (e timeoutError) Temporary() bool { return true }
func (e timeoutError) Unwrap() []error { return []error{e.err, ErrTimeout, errDeadline} }

// setReadTimeout and setWriteTimeout store d as the linked timeout of later
// reads or writes (see linkedTimeout). Removing a timeout that was never
// set allocates nothing.
func (n *netFD) setReadTimeout(d time.Duration) {
	if d = linkedTimeout(d); d != 0 || n.ext.Load() != nil {
		n.extOrNew().timeouts.read.Store(int64(d))
	}
}
func (n *netFD) setWriteTimeout(d time.Duration) {
	if d = linkedTimeout(d); d != 0 || n.ext.Load() != nil {
		n.extOrNew().timeouts.write.Store(int64(d))
	}
}

// maxLinkedTimeout is the longest timeout handed to the backend with an op
// (146 years); a longer one means no timeout. A backend adds the timeout to
// its clock, which would overflow for durations near math.MaxInt64 and
// make a "forever" timeout expire at once.
const maxLinkedTimeout = time.Duration(1 << 62)

// linkedTimeout is the Op.Timeout for a timeout of d: d itself, or 0 (no
// timeout) for a d that is not positive or that exceeds maxLinkedTimeout.
func linkedTimeout(d time.Duration) time.Duration {
	if d <= 0 || d > maxLinkedTimeout {
		return 0
	}
	return d
}

// netAddr converts a backend address to the net.Addr of the network.
func netAddr(network string, a backend.Addr) net.Addr {
	switch a.Family {
	case backend.FamilyInet4, backend.FamilyInet6:
		ap := a.IP
		if network == "udp" {
			return net.UDPAddrFromAddrPort(ap)
		}
		return net.TCPAddrFromAddrPort(ap)
	case backend.FamilyUnix:
		return &net.UnixAddr{Name: a.Path, Net: network}
	}
	return nil
}

// setOption sets a socket option, reporting errors as *net.OpError.
func (n *netFD) setOption(opt backend.Option, v int) error {
	if !n.use() {
		return n.opError("set", ErrClosed)
	}
	defer n.done()
	return n.opError("set", n.ring.Backend().SetOption(n.fd, opt, v))
}

// shutdown shuts down one or both halves.
func (n *netFD) shutdown(how backend.ShutdownHow) error {
	if !n.use() {
		return n.opError("shutdown", ErrClosed)
	}
	defer n.done()
	return n.opError("shutdown", n.ring.Backend().Shutdown(n.fd, how))
}

// isLocalhost reports whether host is "localhost", in any case, as the
// hosts file names the local host.
func isLocalhost(host string) bool { return strings.EqualFold(host, "localhost") }

// splitHostPort splits "host:port", the port a number or a service name
// ("https", from the system's services database, which is a local file).
func splitHostPort(address string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, err
	}
	p, err := net.LookupPort("tcp", port)
	if err != nil {
		return "", 0, err
	}
	return host, uint16(p), nil
}

// resolveAddr parses a local address to bind, as Go's net.Listen reads
// one: "ip:port"; ":port" or "" for every interface (the IPv6 wildcard,
// dual-stack; an empty port is 0, a port the system picks); "localhost"
// for the IPv4 loopback, the address net.Listen picks for it. Other names
// are refused: a socket binds to one address, and the lookup would block.
func resolveAddr(address string) (netip.AddrPort, error) {
	if address == "" {
		return netip.AddrPortFrom(netip.IPv6Unspecified(), 0), nil
	}
	host, port, err := splitHostPort(address)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if host == "" {
		return netip.AddrPortFrom(netip.IPv6Unspecified(), port), nil
	}
	if isLocalhost(host) {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port), nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("blitz: bind to %q: an IP address or localhost is needed (resolve a name first, with Resolve): %w", host, err)
	}
	return netip.AddrPortFrom(ip, port), nil
}
