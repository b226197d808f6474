package blitz

import (
	"net"
	"net/netip"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// ConnectFuture is the future of DialTCP and DialUnix: its pointer is a
// future.Future[future.Result[S]] and a future.Canceler.
type ConnectFuture[S any] struct {
	h       Handle
	net     string
	addr    backend.Addr
	typ     backend.SockType
	timeout time.Duration
	wrap    func(*netFD) S
	err     error
	n       *netFD
	f       ioFuture
	// resolve, if set, looks up a host name first; addrs are its answers
	// still to try, port the port to connect to on them.
	resolve *ResolveFuture
	addrs   []netip.Addr
	port    uint16
}

// withErr records an error found while building the future (a bad
// address), which its first poll reports.
func (c *ConnectFuture[S]) withErr(err error) *ConnectFuture[S] {
	c.err = err
	return c
}

// Poll connects. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (c *ConnectFuture[S]) Poll(cx *future.Context) (future.Result[S], bool) {
	c.f.checkPoll()
	if !cx.Proceed() {
		return future.Result[S]{}, false
	}
	v, ok := c.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (c *ConnectFuture[S]) poll(cx *future.Context) (future.Result[S], bool) {
	c.f.checkPoll()
	if c.err != nil {
		c.f.done = true
		// The address did not parse: there is none to name, as in Go's
		// "dial tcp: address x: missing port in address".
		return future.Fail[S](&net.OpError{Op: "dial", Net: c.net, Err: c.err}), true
	}
	if c.resolve != nil {
		r, ok := c.resolve.Poll(cx)
		if !ok {
			return future.Result[S]{}, false
		}
		c.resolve = nil
		if r.Err == nil && len(r.Value) == 0 {
			r.Err = &net.DNSError{Err: "no addresses", Name: c.addr.Path, IsNotFound: true}
		}
		if r.Err != nil {
			c.f.done = true
			return future.Fail[S](&net.OpError{Op: "dial", Net: c.net, Err: r.Err}), true
		}
		c.addrs = r.Value
		c.addr = backend.AddrPort(netip.AddrPortFrom(c.addrs[0], c.port))
		c.addrs = c.addrs[1:]
	}
	for {
		r, ok := c.attempt(cx)
		if !ok {
			return r, false
		}
		if r.Err == nil || len(c.addrs) == 0 {
			return r, true
		}
		// Try the host's next address.
		c.addr = backend.AddrPort(netip.AddrPortFrom(c.addrs[0], c.port))
		c.addrs = c.addrs[1:]
		c.f = ioFuture{}
	}
}

// attempt connects to c.addr.
func (c *ConnectFuture[S]) attempt(cx *future.Context) (future.Result[S], bool) {
	if !c.f.submitted {
		if err := c.open(); err != nil {
			c.f.done = true
			return future.Fail[S](err), true
		}
		_, _, _, _, err := c.f.start(cx, c.n, c.n.writeSlot()) // a fresh socket: the slot is free
		if err == nil {
			err = c.f.submit(cx, c.n, backend.Op{Kind: backend.KindConnect, FD: c.n.fd, Addr: c.addr, Timeout: linkedTimeout(c.timeout)})
		}
		if err != nil {
			c.f.done = true
			c.n.extOrNew().addrs.Store(&noAddrs) // none to read: the descriptor goes now
			_ = c.n.ring.Backend().CloseFD(c.n.fd)
			return future.Fail[S](c.n.opError("dial", err)), true
		}
	}
	res, ok := c.f.wait(cx)
	if !ok {
		return future.Result[S]{}, false
	}
	if res.Err != nil {
		c.n.setAddrs(backend.Addr{}, c.addr)
		err := c.n.opError("dial", res.Err)
		_ = c.n.close()
		return future.Fail[S](err), true
	}
	local, _ := c.n.ring.Backend().LocalAddr(c.n.fd)
	peer, _ := c.n.ring.Backend().PeerAddr(c.n.fd)
	if peer.IsZero() {
		peer = c.addr
	}
	c.n.setAddrs(local, peer)
	return future.Ok(c.wrap(c.n)), true
}

// open makes the socket.
func (c *ConnectFuture[S]) open() error {
	r, err := ringFor(c.h)
	if err != nil {
		return &net.OpError{Op: "dial", Net: c.net, Err: err}
	}
	fd, err := r.Backend().Socket(c.addr.Family, c.typ)
	if err != nil {
		return &net.OpError{Op: "dial", Net: c.net, Addr: netAddr(c.net, c.addr), Err: err}
	}
	c.n = newNetFD(r, fd, kindOf(c.net), addrsAtConnect, backend.Addr{}) // no addresses before the connect
	return nil
}

// Cancel abandons the connect (or the lookup before it) and closes the
// socket.
func (c *ConnectFuture[S]) Cancel() {
	if c.resolve != nil {
		c.resolve.Cancel()
	}
	if c.f.submitted && !c.f.done {
		c.f.cancel()
		_ = c.n.close()
	}
	c.f.done = true
}
