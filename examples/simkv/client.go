package simkv

import (
	"errors"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// ErrNotSent wraps the error of a command that surely did not reach the
// server (the connect failed): it had no effect.
var ErrNotSent = errors.New("simkv: not sent")

// Client is a connection to the leader, made on first use and again after
// a failure. A Client runs one command at a time (one task owns it).
type Client struct {
	h       blitz.Handle
	addr    string
	timeout time.Duration
	c       *blitz.TCPStream
	rd      *blitz.BufReader
}

// NewClient returns a client of the leader at addr whose commands time
// out after timeout (connect included).
func NewClient(h blitz.Handle, addr string, timeout time.Duration) *Client {
	return &Client{h: h, addr: addr, timeout: timeout}
}

// Close closes the connection, if any.
func (cl *Client) Close() {
	if cl.c != nil {
		cl.c.Close()
		cl.c, cl.rd = nil, nil
	}
}

// Do sends one command line and returns the server's reply line. After an
// error the connection is closed (a late reply must not answer the next
// command); an error wrapping ErrNotSent means the command had no effect,
// any other leaves its outcome unknown.
//
//blitz:async
func (cl *Client) Do(cmd string) (string, error) {
	deadline := time.Now().Add(cl.timeout)
	if cl.c == nil {
		c, err := future.Try(blitz.TryDeadline(deadline, blitz.DialTCP(cl.h, cl.addr, cl.timeout)))
		if err != nil {
			return "", errors.Join(ErrNotSent, err)
		}
		cl.c, cl.rd = c, blitz.NewBufReader(c, 0)
	}
	reply, err := future.Try(blitz.TryDeadline(deadline, cl.roundTripAsync(cmd)))
	if err != nil {
		cl.Close()
		return "", err
	}
	return reply, nil
}

// roundTrip writes cmd and reads the reply line.
//
//blitz:async
func (cl *Client) roundTrip(cmd string) (string, error) {
	if _, err := future.Try(cl.c.WriteAll([]byte(cmd + "\n"))); err != nil {
		return "", err
	}
	return future.Try(cl.rd.ReadLine())
}

// Get returns key's value and whether it is set. An "ERR" reply is an
// error.
//
//blitz:async
func (cl *Client) Get(key string) (GetResult, error) {
	reply, err := future.Try(cl.DoAsync("GET " + key))
	if err != nil {
		return GetResult{}, err
	}
	if reply == "NOT_FOUND" {
		return GetResult{}, nil
	}
	if v, ok := strings.CutPrefix(reply, "VALUE "); ok {
		return GetResult{Value: v, Found: true}, nil
	}
	return GetResult{}, replyError(reply)
}

// GetResult is the answer to a GET.
type GetResult struct {
	Value string
	Found bool
}

// Put sets key to value. An error leaves the outcome unknown, unless it
// wraps ErrNotSent.
//
//blitz:async
func (cl *Client) Put(key, value string) error {
	reply, err := future.Try(cl.DoAsync("PUT " + key + " " + value))
	if err != nil {
		return err
	}
	if reply != "OK" {
		return replyError(reply)
	}
	return nil
}

// replyError is the error of a reply other than the expected ones.
func replyError(reply string) error {
	return errors.New("simkv: server: " + reply)
}
