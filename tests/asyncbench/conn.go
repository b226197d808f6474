package asyncbench

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// ErrNegative is what the handler returns when it reads a negative value.
var ErrNegative = errors.New("asyncbench: negative value read")

// Conn is a simulated connection: Read delivers the values of its script in
// order and then io.EOF, Write records what it is given. Its futures are
// value types whose pointers are futures, like the runtime's ReadFuture and
// WriteFuture, and each is ready at its second poll. A Conn has one owner,
// the task or goroutine that reads and writes it.
type Conn struct {
	script []int // what Read delivers; read by the owner
	next   int   // the index of the next value Read delivers; owner only
	// Written is every value written, in order; owner only (read it after
	// the owner finished).
	Written []int
	// Closed is set by Close; owner only.
	Closed bool
}

// Close marks the connection closed, as a handler's deferred Close of its
// socket does; it returns nil.
func (c *Conn) Close() error {
	c.Closed = true
	return nil
}

// NewConn returns a connection whose reads deliver script.
func NewConn(script ...int) *Conn { return &Conn{script: script} }

// Read returns a future of the next value, or of io.EOF after the last.
func (c *Conn) Read() ReadFuture { return ReadFuture{c: c} }

// ReadBlocking is Read for a goroutine: the value, or io.EOF after the last.
func (c *Conn) ReadBlocking() (int, error) {
	if c.next == len(c.script) {
		return 0, io.EOF
	}
	v := c.script[c.next]
	c.next++
	return v, nil
}

// Write returns a future that records v and completes with the number of
// values written so far.
func (c *Conn) Write(v int) WriteFuture { return WriteFuture{c: c, v: v} }

// WriteBlocking is Write for a goroutine.
func (c *Conn) WriteBlocking(v int) int {
	c.Written = append(c.Written, v)
	return len(c.Written)
}

// ReadFuture is the future of Conn.Read; its pointer is a
// future.Future[future.Result[int]]. It has nothing registered outside
// itself, so it needs no Cancel.
type ReadFuture struct {
	c       *Conn
	yielded bool // set by the first poll; owned by the poller
}

// Poll wakes the task and returns not ready the first time, and reads the
// second.
func (r *ReadFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	if !r.yielded {
		r.yielded = true
		cx.Waker().Wake()
		return future.Result[int]{}, false
	}
	v, err := r.c.ReadBlocking()
	if err != nil {
		return future.Fail[int](err), true
	}
	return future.Ok(v), true
}

// WriteFuture is the future of Conn.Write; its pointer is a
// future.Future[int].
type WriteFuture struct {
	c       *Conn
	v       int
	yielded bool // set by the first poll; owned by the poller
}

// Poll wakes the task and returns not ready the first time, and writes the
// second.
func (w *WriteFuture) Poll(cx *future.Context) (int, bool) {
	if !w.yielded {
		w.yielded = true
		cx.Waker().Wake()
		return 0, false
	}
	return w.c.WriteBlocking(w.v), true
}

// Later returns a future of v that is ready at its second poll: the unit of
// the per-await benchmark.
func Later(v int) LaterFuture { return LaterFuture{v: v} }

// LaterFuture is the future of Later; its pointer is a future.Future[int].
// Reset makes it wait again for a new value, so that one LaterFuture can
// serve every await of a loop.
type LaterFuture struct {
	v       int
	yielded bool // set by the first poll; owned by the poller
}

// Poll wakes the task and returns not ready the first time, and v the
// second.
func (l *LaterFuture) Poll(cx *future.Context) (int, bool) {
	if !l.yielded {
		l.yielded = true
		cx.Waker().Wake()
		return 0, false
	}
	return l.v, true
}

// Reset makes l a fresh Later(v).
func (l *LaterFuture) Reset(v int) { *l = LaterFuture{v: v} }

// Gate holds tasks and goroutines until Release: tasks await the future of
// Wait, goroutines call WaitBlocking. Waiting counts those that arrived.
type Gate struct {
	n        syncprim.Notify
	released chan struct{} // closed by Release; what goroutines block on
	// Waiting counts the waits begun (incremented after the wait is
	// registered, so a Release that follows a count that includes a waiter
	// releases it).
	Waiting atomic.Int64
}

// NewGate returns a gate that holds its waiters.
func NewGate() *Gate { return &Gate{released: make(chan struct{})} }

// Wait returns a future that completes at Release. The future takes the
// gate's generation when it is made, so it cannot miss a Release that comes
// between this call and its first poll.
func (g *Gate) Wait() syncprim.NotifiedFuture {
	defer g.Waiting.Add(1) // after Notified: see Waiting
	return *g.n.Notified()
}

// WaitBlocking blocks the calling goroutine until Release.
func (g *Gate) WaitBlocking() {
	g.Waiting.Add(1)
	<-g.released
}

// Release completes every wait begun before it (a goroutine's, and a task's
// whose future Wait made before it). Call it once.
func (g *Gate) Release() {
	close(g.released)
	g.n.NotifyWaiters()
}
