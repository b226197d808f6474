package blitz

// DialTLS: connect over TCP and run the TLS client handshake.

import (
	"crypto/tls"
	"net"
	"time"

	"github.com/blitz-go/blitz/future"
)

// DialTLS returns a future that connects to address over TCP on h's runtime
// (see DialTCP: timeout bounds each connect attempt) and runs the TLS
// client handshake with cfg, resolving to the established stream. As with
// tls.Dial, an empty cfg.ServerName is taken from address's host (cfg is
// copied then, not modified); a nil cfg is the zero tls.Config. A failed
// handshake closes the connection and is the future's error. Bound the
// whole with Timeout; cancelling the future closes the connection it made.
func DialTLS(h Handle, address string, cfg *tls.Config, timeout time.Duration) *TLSDialFuture {
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		host := address
		if hst, _, err := net.SplitHostPort(address); err == nil {
			host = hst
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	return &TLSDialFuture{connect: DialTCP(h, address, timeout), cfg: cfg}
}

// TLSDialFuture is the future of DialTLS: its pointer is a
// future.Future[future.Result[*TLSStream]] and a future.Canceler.
type TLSDialFuture struct {
	_       noCopy
	connect *ConnectFuture[*TCPStream]
	cfg     *tls.Config
	s       *TLSStream
	hs      *TLSHandshakeFuture
	done    bool
}

// Poll connects, then runs the handshake.
func (d *TLSDialFuture) Poll(cx *future.Context) (future.Result[*TLSStream], bool) {
	if d.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if d.s == nil {
		r, ok := d.connect.Poll(cx)
		if !ok {
			return future.Result[*TLSStream]{}, false
		}
		if r.Err != nil {
			d.done = true
			return future.Fail[*TLSStream](r.Err), true
		}
		d.s = TLSClient(r.Value, d.cfg)
		d.hs = d.s.Handshake()
	}
	r, ok := d.hs.Poll(cx)
	if !ok {
		return future.Result[*TLSStream]{}, false
	}
	d.done = true
	if r.Err != nil {
		_ = d.s.Close()
		return future.Fail[*TLSStream](r.Err), true
	}
	return future.Ok(d.s), true
}

// Cancel abandons the dial, closing the connection if it was made.
func (d *TLSDialFuture) Cancel() {
	if d.done {
		return
	}
	d.done = true
	if d.s == nil {
		d.connect.Cancel()
		return
	}
	d.hs.Cancel()
	_ = d.s.Close()
}
