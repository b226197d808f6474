package websocket

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// keepAlive is the state of a connection's keep-alive policy
// (Options.KeepAlive): the reader's timer, and what it last heard. Made
// by the reader at its first wait and kept for the connection's life (in
// Conn.x); every field is the reader's (the holder of Conn.reading).
type keepAlive struct {
	sleep blitz.SleepFuture
	// heard is when input last arrived, or when the first wait began (see
	// kaNow).
	heard time.Duration
	// pinged says the policy's ping went out at pingAt and nothing has
	// arrived since.
	pingAt time.Duration
	pinged bool
	// armed says sleep is set for the current deadline (see deadline).
	armed bool
}

// keepAliveState returns the connection's keep-alive state, made on the
// first call (under mu: writers may be making x at the same time).
// Called by the reader, with a policy configured.
func (c *Conn) keepAliveState() *keepAlive {
	if c.kaOn {
		return c.x.ka // x is kept once ka is in it (takeWaitersLocked)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x == nil {
		c.x = new(connExtra)
	}
	ka := &keepAlive{heard: kaNow()}
	c.x.ka, c.kaOn = ka, true
	return ka
}

// heard notes that input arrived: the policy's silence starts again.
// Called by the reader when a read returned data, with a policy
// configured.
func (c *Conn) heard() {
	ka := c.keepAliveState()
	ka.heard, ka.pinged = kaNow(), false
	// The timer stays as it is: when it fires early it is set again from
	// the new time (keepAliveDue), so that a busy connection pays a clock
	// read per read, not a timer reset.
}

// due is when the policy acts next, as a time since kaBase: a ping after
// KeepAlive of silence, or the failure KeepAliveTimeout after an
// unanswered ping.
func (c *Conn) due(ka *keepAlive) time.Duration {
	if ka.pinged {
		return ka.pingAt + c.cfg.keepAliveTimeout
	}
	return ka.heard + c.cfg.keepAlive
}

// deadline is due as a time.Time, for a timer or a read deadline.
func (c *Conn) deadline(ka *keepAlive) time.Time { return kaBase.Add(c.due(ka)) }

// kaBase is the origin of the policy's times, which are read from the
// monotonic clock only (half the cost of time.Now).
var kaBase = time.Now()

// kaNow is the time since kaBase.
func kaNow() time.Duration { return time.Since(kaBase) }

// keepAliveDue runs the policy while the read waits for input: it
// reports true when the reader has something to do before it waits on
// (the policy's ping to write, or the failure to report), and false when
// the read may wait, the policy's timer set with cx's Waker. Called by
// the reader, with a policy configured.
func (c *Conn) keepAliveDue(cx *future.Context) bool {
	ka := c.keepAliveState()
	for {
		if !ka.armed {
			ka.sleep.Reset(c.deadline(ka))
			ka.armed = true
		}
		if _, ok := ka.sleep.Poll(cx); !ok {
			return false
		}
		ka.armed = false
		if c.closing() {
			// No ping after our close frame; Close's own timeout bounds
			// the wait for the peer's.
			return false
		}
		if c.keepAliveAct() {
			return true
		}
		// Input came since the timer was set: wait for the new deadline.
	}
}

// keepAliveAct does what the policy's deadline asks once it has passed:
// a ping after KeepAlive of silence, the failure after an unanswered
// ping. It reports false when the deadline has not passed (input came
// since it was set). Called by the reader.
func (c *Conn) keepAliveAct() bool {
	ka := c.keepAliveState()
	now := kaNow()
	if now < c.due(ka) {
		return false
	}
	c.state()
	if ka.pinged {
		c.rs.readErr = fmt.Errorf("%w: nothing within %v of a ping after %v of silence: %w",
			ErrKeepAliveTimeout, c.cfg.keepAliveTimeout, c.cfg.keepAlive, os.ErrDeadlineExceeded)
		c.closeTransport()
		return true
	}
	c.getCtl()
	c.rs.cs.reply = frameWrite{c: c, op: opPing, fin: true}
	c.rs.replyOn = true
	ka.pinged, ka.pingAt = true, now
	return true
}

// fillNet is fill's blocking read of a net.Conn under the policy: the
// read's deadline is the policy's, and a read that reaches it lets the
// policy act (keepAliveAct) instead of failing. It reports whether the
// read's result was consumed here (then fill returns true: the reader
// goes on). Called by the reader, with a policy configured.
func (c *Conn) fillNet(nt *netTransport, buf []byte) (n int, err error, consumed bool) {
	ka := c.keepAliveState()
	if c.closing() {
		_ = nt.nc.SetReadDeadline(time.Time{})
		res, _ := nt.PollRead(nil, buf)
		return res.Value, res.Err, false
	}
	_ = nt.nc.SetReadDeadline(c.deadline(ka))
	res, _ := nt.PollRead(nil, buf)
	if res.Value == 0 && errors.Is(res.Err, os.ErrDeadlineExceeded) {
		c.mu.Lock()
		closed := c.tclosed
		c.mu.Unlock()
		if !closed {
			c.keepAliveAct() // or, if not due (a deadline of the caller's), read again
			return 0, nil, true
		}
	}
	return res.Value, res.Err, false
}

// pauseKeepAlive takes the policy's timer out of the timer wheel, for a
// read that ended with an error or was cancelled, or a connection that is
// closing: the next read that waits sets it again. Called by the reader.
func (c *Conn) pauseKeepAlive() {
	if c.kaOn {
		ka := c.x.ka
		ka.sleep.Cancel()
		ka.armed = false
	}
}

// closing reports whether our close frame went out or the transport is
// closed. Takes mu.
func (c *Conn) closing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeSent || c.tclosed
}
