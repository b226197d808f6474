package wsinterop

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// errNA is what a peer returns for a check its library cannot take part
// in (the check is then reported n.a.).
var errNA = errors.New("not supported by this library")

// Close codes and reasons of the close handshakes.
const (
	clientCode   = 4001
	clientReason = "client bye"
	serverCode   = 4002
	serverReason = "server bye"
	fragChunk    = 1000
	ioTimeout    = 10 * time.Second
)

// Commands of the echo servers, sent as text messages: the rest of a
// "!frag " message is echoed in fragments of fragChunk bytes; "!close"
// makes the server start the close handshake with serverCode and
// serverReason; "!ping X" makes it send a ping with payload X.
const (
	cmdFrag  = "!frag "
	cmdClose = "!close"
	cmdPing  = "!ping "
)

// sizes are the payload sizes exchanged: around the frame length
// encodings (125/126, 65535/65536), the compression threshold (128) and
// up to 300 KB.
var sizes = []int{0, 1, 125, 126, 127, 128, 1000, 4096, 65535, 65536, 300 << 10}

// testSizes are sizes, short of the largest in -short mode (whose race
// detector makes 300 KB messages slow).
func testSizes() []int {
	if testing.Short() {
		return sizes[:len(sizes)-1]
	}
	return sizes
}

// big is the size of the large fragmented messages.
func big() int {
	if testing.Short() {
		return 70000
	}
	return 300 << 10
}

// payload returns n bytes of compressible UTF-8 text (with multi-byte
// runes, which fragments may cut) or, for binary, of compressible bytes
// that are not UTF-8.
func payload(n int, binary bool) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		if binary {
			b.WriteByte(0xff)
			b.WriteString(strconv.Itoa(i % 97))
			b.WriteByte(0x80)
		} else {
			fmt.Fprintf(&b, "message %d: héllo wörld 日本語 ", i%97)
		}
	}
	p := b.Bytes()[:n]
	if !binary {
		// Do not end inside a rune.
		for len(p) > 0 && p[len(p)-1]&0xC0 == 0x80 || len(p) > 0 && p[len(p)-1] >= 0xC0 {
			p = p[:len(p)-1]
		}
		p = append(p, bytes.Repeat([]byte{'.'}, n-len(p))...)
	}
	return p
}

// closeInfo is a close frame as a side saw it.
type closeInfo struct {
	code   int
	reason string
}

// events are what a server saw of its clients, for the checks of the
// client side.
type events struct {
	pings  chan string    // payloads of the pings received
	closes chan closeInfo // close frames received from the client
	// closeDone receives, after a server-initiated close handshake, the
	// time it took to get the client's close frame (or an error).
	closeDone chan error
}

func newEvents() *events {
	return &events{pings: make(chan string, 16), closes: make(chan closeInfo, 16), closeDone: make(chan error, 16)}
}

func (e *events) ping(p string) {
	select {
	case e.pings <- p:
	default:
	}
}
func (e *events) closed(code int, r string) {
	select {
	case e.closes <- closeInfo{code, r}:
	default:
	}
}
func (e *events) handshakeDone(err error) {
	select {
	case e.closeDone <- err:
	default:
	}
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(ioTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// counter counts the bytes that cross connections.
type counter struct{ read, written atomic.Int64 }

type countConn struct {
	net.Conn
	c *counter
}

func (c countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.c.read.Add(int64(n))
	return n, err
}

func (c countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.c.written.Add(int64(n))
	return n, err
}

type countListener struct {
	net.Listener
	c *counter
}

func (l countListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countConn{Conn: c, c: l.c}, nil
}

// hasDeflate reports whether an extensions header value holds
// permessage-deflate.
func hasDeflate(ext string) bool { return strings.Contains(ext, "permessage-deflate") }

// parseCmdClose is shared by the peer servers: whether m is the close
// command.
func isCmdClose(binary bool, m []byte) bool { return !binary && string(m) == cmdClose }

// splitCmd returns the rest of m after a command prefix.
func splitCmd(binary bool, m []byte, prefix string) ([]byte, bool) {
	if binary || !bytes.HasPrefix(m, []byte(prefix)) {
		return nil, false
	}
	return m[len(prefix):], true
}

// chunks cuts p into pieces of n bytes (one empty piece for an empty p).
func chunks(p []byte, n int) [][]byte {
	if len(p) == 0 {
		return [][]byte{nil}
	}
	var out [][]byte
	for len(p) > 0 {
		k := min(n, len(p))
		out = append(out, p[:k])
		p = p[k:]
	}
	return out
}
