package blitz

// TLSListener: a TCP or Unix listener whose connections are TLSStreams.

import (
	"crypto/tls"
	"net"

	"github.com/blitz-go/blitz/backend"
)

// TLSListener accepts TLS connections: each accepted connection is the
// server side of a TLSStream whose handshake runs in the task that handles
// it (at its first Handshake, read or write), not in the accept loop, so a
// slow client delays nobody else. It is an Acceptor, for Serve. Bound the
// handshake in the handler with Timeout(d, stream.Handshake()) or the
// stream's SetReadTimeout.
type TLSListener struct {
	l    *listener
	wrap func(*netFD) TLSTransport
	cfg  *tls.Config
}

// ListenTLS binds a TCP listener to address (see ListenTCP) whose
// connections are TLS servers with cfg, which must have a certificate and
// must not be modified afterwards.
func ListenTLS(h Handle, address string, cfg *tls.Config) (*TLSListener, error) {
	l, err := ListenTCP(h, address)
	if err != nil {
		return nil, err
	}
	return NewTLSListener(l, cfg), nil
}

// NewTLSListener returns a listener of TLS servers with cfg over l, a
// *TCPListener or a *UnixListener, which it owns from now on (Close closes
// it).
func NewTLSListener(l interface{ base() *listener }, cfg *tls.Config) *TLSListener {
	tl := &TLSListener{l: l.base(), cfg: cfg}
	switch l.(type) {
	case *UnixListener:
		tl.wrap = func(n *netFD) TLSTransport { return wrapUnix(n) }
	default:
		tl.wrap = func(n *netFD) TLSTransport { return wrapTCP(n) }
	}
	return tl
}

// Accept returns a future of the next connection, its handshake not run
// yet (see AcceptFuture).
func (l *TLSListener) Accept() *AcceptFuture[*TLSStream] {
	return &AcceptFuture[*TLSStream]{l: l.l, wrap: func(r *ioRing, fd backend.FD, kind netKind, peer backend.Addr) *TLSStream {
		return TLSServer(l.wrap(newNetFD(r, fd, kind, addrsAccepted, peer)), l.cfg)
	}}
}

// Addr returns the listener's address.
func (l *TLSListener) Addr() net.Addr { return l.l.Addr() }

// Close closes the listener; accepts in flight fail with ErrClosed.
func (l *TLSListener) Close() error { return l.l.Close() }

var _ Acceptor[*TLSStream] = (*TLSListener)(nil)

// Compile-time checks: a TLSStream is an AsyncReader and AsyncWriter, and
// the runtime's streams are TLS transports.
var (
	_ AsyncReader  = (*TLSStream)(nil)
	_ AsyncWriter  = (*TLSStream)(nil)
	_ TLSTransport = (*TCPStream)(nil)
	_ TLSTransport = (*UnixStream)(nil)
	_ pooledReader = (*TCPStream)(nil)
	_ pooledReader = (*UnixStream)(nil)
)
