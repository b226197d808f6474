// Package twintest drives the two versions of each program of
// examples/twins (async functions on blitz, and goroutines) with the same
// inputs and checks the same observable results, so that the two versions of
// a program pass the same test. Each version's test calls the driver of its
// program with an adapter that starts that version.
package twintest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// wait bounds every read a test expects to succeed.
const wait = 5 * time.Second

// Conn is a line-oriented TCP client.
type Conn struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

// Dial connects to addr.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &Conn{t: t, c: c, r: bufio.NewReader(c)}
}

// Send writes line and a newline.
func (c *Conn) Send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.c, line+"\n"); err != nil {
		c.t.Fatalf("send %q: %v", line, err)
	}
}

// Line reads the next line, without its newline.
func (c *Conn) Line() string {
	c.t.Helper()
	l, err := c.read(wait)
	if err != nil {
		c.t.Fatalf("read a line: %v", err)
	}
	return l
}

func (c *Conn) read(d time.Duration) (string, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(d))
	l, err := c.r.ReadString('\n')
	if err != nil {
		return l, err
	}
	return strings.TrimSuffix(l, "\n"), nil
}

// Ask sends line and returns the reply line.
func (c *Conn) Ask(line string) string {
	c.t.Helper()
	c.Send(line)
	return c.Line()
}

// EOF expects the server to close the connection within d, with nothing
// more sent, and returns how long that took.
func (c *Conn) EOF(d time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	l, err := c.read(d)
	switch {
	case errors.Is(err, io.EOF) && l == "":
	case isReset(err) && l == "":
	case err == nil:
		c.t.Fatalf("got %q, want the connection closed", l)
	default:
		c.t.Fatalf("want the connection closed within %v, got %q, %v", d, l, err)
	}
	return time.Since(start)
}

// Quiet expects nothing from the server for d.
func (c *Conn) Quiet(d time.Duration) {
	c.t.Helper()
	l, err := c.read(d)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("want nothing for %v, got %q, %v", d, l, err)
	}
	c.r.Reset(c.c) // a timed-out read may have buffered part of a line; there is none
}

// CloseWrite shuts down the sending side: the server reads end of stream.
func (c *Conn) CloseWrite() {
	c.t.Helper()
	if err := c.c.(*net.TCPConn).CloseWrite(); err != nil {
		c.t.Fatal(err)
	}
}

// Close closes the connection.
func (c *Conn) Close() { c.c.Close() }

// Raw is the connection.
func (c *Conn) Raw() net.Conn { return c.c }

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(err.Error(), "reset")
}

// Refused expects nothing to serve addr any more: a dial is refused, or
// (on io_uring, where the listener's descriptor is closed by an operation
// of the ring, an instant after Close returns) connects and is closed at
// once without a byte.
// A connection that stays open without a byte for a second fails: nothing
// serves it, and nothing would close it.
func Refused(t testing.TB, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	n, err := c.Read(make([]byte, 1))
	switch {
	case n == 0 && (errors.Is(err, io.EOF) || isReset(err)):
	case n == 0 && errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatalf("dial %s after the stop connected and the connection stayed open, unserved", addr)
	default:
		t.Fatalf("dial %s after the stop connected, and a read gave %d bytes, %v", addr, n, err)
	}
}
