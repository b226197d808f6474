//go:build linux

package peers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Payload is the size of an echo round trip.
const Payload = 64

// request is the HTTP load's request.
var request = []byte("GET / HTTP/1.1\r\nHost: peers\r\nUser-Agent: peerbench\r\n\r\n")

// Load is what a load run did.
type Load struct {
	// Ops counts completed round trips (echo) or responses (HTTP).
	Ops int64
	// Elapsed is the run's wall time.
	Elapsed time.Duration
}

// PerSecond is Ops per second of wall time.
func (l Load) PerSecond() float64 { return float64(l.Ops) / l.Elapsed.Seconds() }

// Client is one connection of the load, able to make one round trip of
// its mode.
type Client struct {
	c   net.Conn
	r   *bufio.Reader
	m   Mode
	buf []byte
}

// Dial connects to addr from source (the zero Addr lets the kernel pick);
// a WS client shakes hands.
// A source is bound without a port (IP_BIND_ADDRESS_NO_PORT): the kernel
// picks the port on connecting, so that one port serves a source towards
// many destinations.
func Dial(m Mode, addr string, source netip.Addr) (*Client, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if source.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: source.AsSlice()}
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var err error
			if cerr := c.Control(func(fd uintptr) {
				err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
			}); cerr != nil {
				return cerr
			}
			return err
		}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	cl := &Client{c: c, m: m}
	switch m {
	case HTTP:
		cl.r = bufio.NewReaderSize(c, 1024)
	case WS:
		cl.r = bufio.NewReaderSize(c, 4096)
		cl.buf = make([]byte, 0, WSPayload)
		if err := cl.wsHandshake(); err != nil {
			c.Close()
			return nil, err
		}
	default:
		cl.buf = make([]byte, Payload)
	}
	return cl, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// RoundTrip makes one echo round trip, one HTTP request or one WebSocket
// message's round trip and checks the answer.
func (c *Client) RoundTrip() error {
	switch c.m {
	case HTTP:
		return c.httpRoundTrip()
	case WS:
		return c.wsRoundTrip()
	}
	out := bytes.Repeat([]byte{'x'}, Payload)
	if _, err := c.c.Write(out); err != nil {
		return err
	}
	if _, err := io.ReadFull(c.c, c.buf); err != nil {
		return err
	}
	if !bytes.Equal(c.buf, out) {
		return errors.New("peers: echo answered other bytes")
	}
	return nil
}

// httpRoundTrip sends one request and reads one response with a
// Content-Length body.
func (c *Client) httpRoundTrip() error {
	if _, err := c.c.Write(request); err != nil {
		return err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200")) {
		return fmt.Errorf("peers: status %q", bytes.TrimSpace(status))
	}
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return fmt.Errorf("peers: Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return errors.New("peers: response without Content-Length")
	}
	_, err = c.r.Discard(length)
	return err
}

// Run makes round trips on conns connections to addr for d and reports how
// many completed. Any failed round trip fails the run.
func Run(m Mode, addr string, conns int, d time.Duration) (Load, error) {
	return RunAt(m, addr, conns, d, 0)
}

// RunAt is Run at a fixed offered load: rate round trips per second in
// all, spread evenly over the connections, each connection starting its
// round trips on a schedule of its own (rate 0: as fast as the server
// answers, as Run). A connection that falls behind its schedule does not
// wait until it has caught up, so Load reports less than rate only when
// the server (or the load itself) could not keep up. At a fixed rate the
// server's CPU time per round trip compares servers that all keep up,
// where a closed loop compares how fast they go.
func RunAt(m Mode, addr string, conns int, d time.Duration, rate float64) (Load, error) {
	if rate < 0 {
		return Load{}, fmt.Errorf("peers: negative rate %v", rate)
	}
	clients, err := DialMany(m, addr, conns, nil)
	if err != nil {
		return Load{}, err
	}
	defer closeAll(clients)
	var interval time.Duration // between two round trips of one connection
	if rate > 0 {
		interval = time.Duration(float64(conns) / rate * float64(time.Second))
	}
	var ops atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	start := time.Now()
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Connection i starts i/conns of an interval after the first,
			// so that the round trips do not arrive in lock step.
			next := start.Add(interval * time.Duration(i) / time.Duration(max(conns, 1)))
			for !stop.Load() {
				if interval > 0 {
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
					}
					next = next.Add(interval)
				}
				if err := c.RoundTrip(); err != nil {
					errs[i] = err
					return
				}
				ops.Add(1)
			}
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	return Load{Ops: ops.Load(), Elapsed: time.Since(start)}, errors.Join(errs...)
}

// DialMany opens n connections to addr, the sources taken in turn (none:
// the kernel picks), 64 dials at a time, and makes one round trip on each.
func DialMany(m Mode, addr string, n int, sources []netip.Addr) ([]*Client, error) {
	clients := make([]*Client, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, 64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				var src netip.Addr
				if len(sources) > 0 {
					src = sources[i%len(sources)]
				}
				c, err := Dial(m, addr, src)
				if err == nil {
					err = c.RoundTrip()
				}
				if err != nil {
					errs[i] = fmt.Errorf("connection %d: %w", i, err)
					if c != nil {
						c.Close()
					}
					next.Store(int64(n)) // stop the others
					return
				}
				clients[i] = c
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(clients)
		return nil, err
	}
	return clients, nil
}

// CloseAll closes every client.
func CloseAll(clients []*Client) { closeAll(clients) }

func closeAll(clients []*Client) {
	for _, c := range clients {
		if c != nil {
			c.Close()
		}
	}
}
