package blitz

import (
	"errors"
	"io"
	"sync"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/iodriver"
)

// poolGroup is the backend buffer group of the runtime's read pool.
const poolGroup = iodriver.PoolGroup

// PrepareReadPool makes the runtime's read pool now rather than on the first
// pooled read, so that it is registered with the backend, and a failure
// reported, at a time of the caller's choosing. The pool's first buffers
// are made now; the others, up to Config.ReadBufferCount of
// ReadBufferSize bytes, as reads need them at once, and their pages are
// given back once a burst is over (see Config.ReadBufferCount). It returns
// ErrNoIO without an I/O backend.
func (rt *Runtime) PrepareReadPool() error {
	if rt.io == nil {
		return ErrNoIO
	}
	for _, r := range rt.io.Rings() {
		if _, err := r.ReadPool(); err != nil {
			return err
		}
	}
	return nil
}

// PooledBuf is data a pooled read received: Bytes until Release, which
// gives the buffer back to the runtime's pool. Release it exactly once,
// and do not keep Bytes afterwards: the buffer is reused for other reads.
// A PooledBuf that is not from the pool (the pool was empty, see
// ReadPooled) releases nothing.
type PooledBuf struct {
	// p and n are the data (nil and 0 for none): a pointer and a length
	// rather than a slice, so that a PooledBuf held in a connection's
	// state costs 24 bytes, not 40.
	p *byte
	// r is the ring whose pool holds buffer id; nil when the data is not
	// in the pool.
	r  *ioRing
	n  int32
	id uint16
}

// pooledBuf makes the PooledBuf of b, in buffer id of r's pool (r nil: not
// pooled). len(b) fits an int32: it is at most a read pool buffer's size.
func pooledBuf(b []byte, r *ioRing, id uint16) PooledBuf {
	if len(b) == 0 {
		return PooledBuf{r: r, id: id}
	}
	return PooledBuf{p: &b[0], n: int32(len(b)), r: r, id: id}
}

// Bytes returns the data. Its capacity is its length: an append copies it
// rather than writing into the pool's buffer.
func (p PooledBuf) Bytes() []byte {
	if p.p == nil {
		return nil
	}
	return unsafe.Slice(p.p, p.n)
}

// Advance returns p without its first n bytes (without any, n at least
// its length): the rest of the data, still in the pool's buffer, which
// Release gives back whole. So a writer that got part of the data out
// keeps its progress in the buffer it holds, as bytes.Buffer.Next does in
// a bytes.Buffer:
//
//	r, ok := s.PollWrite(cx, buf.Bytes())
//	...
//	if buf = buf.Advance(r.Value); len(buf.Bytes()) > 0 {
//		continue // the rest goes in the next write
//	}
//	buf.Release()
//
// It panics if n is negative.
func (p PooledBuf) Advance(n int) PooledBuf {
	switch {
	case n < 0:
		panic("blitz: PooledBuf.Advance: negative count")
	case n >= int(p.n):
		p.p, p.n = nil, 0
	default:
		p.p = (*byte)(unsafe.Add(unsafe.Pointer(p.p), n))
		p.n -= int32(n)
	}
	return p
}

// Release gives the buffer back to the pool.
func (p PooledBuf) Release() {
	if p.r != nil {
		_ = p.r.Backend().ReleaseBuffer(poolGroup, p.id)
	}
}

// ReadPooled returns a future of the next data on the stream, in a buffer of
// the runtime's pool: the read holds no buffer while it waits (io_uring
// picks one from its provided-buffer ring when data arrives; the other
// backends take one on readiness), so 10^4 idle connections hold no read
// buffers at all. When the pool is empty at that moment, the read goes on
// with a buffer of its own, allocated for it (no data is lost, nothing
// spins). End of stream is io.EOF.
//
// It is the way a server reads: a connection waiting for its peer then
// costs its task and its socket, a few hundred bytes, and on io_uring,
// epoll and kqueue no operation record either (the receive is armed in the
// backend, a few bytes there). A read timeout (SetReadTimeout) makes the
// read wait through an operation of its own, as Read does. Write the data
// back, or copy what must be kept, then Release the buffer: a held buffer
// is one fewer for every connection of the runtime.
//
// The future is the connection's, reused by the next ReadPooled once it
// has completed or been cancelled (see Read).
func (c *conn) ReadPooled() *ReadPooledFuture {
	f := c.readPooled
	if c.pollingPooled {
		f = new(ReadPooledFuture) // PollReadPooled's is in flight: a read of its own, not kept
	} else if f == nil || !f.f.done {
		f = new(ReadPooledFuture)
		c.readPooled = f
	}
	c.pooledRead = false // handed out: never parked in pooledReads
	*f = ReadPooledFuture{n: c.n}
	return f
}

// PollReadPooled is ReadPooled for code that polls, as PollRead is Read:
// ready with the buffer (or an error, io.EOF at the end of the stream),
// or not ready with the read in flight, which the next PollReadPooled
// continues. The caller keeps no future of its own, and a read that waits
// for its peer through the backend's armed receive (io_uring, epoll,
// kqueue) keeps none in the stream either: a protocol's connection that
// waits between messages holds nothing for its read but its socket.
// CancelRead abandons the read in flight; what it received goes to the
// next read. One task reads at a time.
func (c *conn) PollReadPooled(cx *future.Context) (future.Result[PooledBuf], bool) {
	switch {
	case !c.pollingPooled:
		if f := c.readPooled; f == nil || !c.pooledRead || !f.f.done {
			c.readPooled = pooledReads.Get().(*ReadPooledFuture)
		}
		*c.readPooled = ReadPooledFuture{n: c.n}
		c.pooledRead, c.pollingPooled = true, true
	case c.readPooled == nil:
		c.unparkPooled()
	}
	f := c.readPooled
	r, ok := f.Poll(cx)
	switch {
	case ok:
		c.pollingPooled = false
	case f.parkable():
		// Waiting on the armed receive: the whole state is "armed", which
		// unparkPooled rebuilds, and nothing refers to f (the recvArm
		// keeps a flag, not its owner). So the future goes back to the
		// pool while the peer is silent.
		c.readPooled = nil
		pooledReads.Put(f)
	}
	return r, ok
}

// pooledReads holds the ReadPooledFutures that PollReadPooled runs on: a
// stream's goes back while its read waits on the armed receive (see
// parkable), so 10^4 idle connections keep none, and a loop of reads
// still allocates nothing.
var pooledReads = sync.Pool{New: func() any { return new(ReadPooledFuture) }}

// parkable reports whether r is a pooled read that waits on its socket's
// armed receive and on nothing else: no op, no buffer of its own, nothing
// but armed set. Such a read's state can be dropped and rebuilt.
func (r *ReadPooledFuture) parkable() bool {
	return r.own == nil && r.f == ioFuture{armed: true}
}

// unparkPooled gives the PollReadPooled in flight, whose future was
// parked (see PollReadPooled), a future again, in the state it was
// parked in. The reader's, as readPooled is.
func (c *conn) unparkPooled() {
	f := pooledReads.Get().(*ReadPooledFuture)
	*f = ReadPooledFuture{n: c.n, f: ioFuture{armed: true}}
	c.readPooled, c.pooledRead = f, true
}

// ReadPooledFuture is the future of ReadPooled: its pointer is a
// future.Future[future.Result[PooledBuf]] and a future.Canceler.
type ReadPooledFuture struct {
	_ noCopy
	n *netFD
	f ioFuture
	// own is the fallback buffer when the pool ran dry (a pointer: an idle
	// connection's pending read should not pay a slice header for it).
	own *[]byte
	// f.armed: the read owns the socket's armed receive (see recvArm).
}

// Poll reads. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (r *ReadPooledFuture) Poll(cx *future.Context) (future.Result[PooledBuf], bool) {
	r.f.checkPoll()
	if !cx.Proceed() {
		return future.Result[PooledBuf]{}, false
	}
	v, ok := r.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (r *ReadPooledFuture) poll(cx *future.Context) (future.Result[PooledBuf], bool) {
	r.f.checkPoll()
	ring := r.n.ring
	for {
		if !r.f.submitted {
			size, err := ring.ReadPool()
			if err != nil {
				r.f.done = true
				return future.Fail[PooledBuf](r.n.opError("read", err)), true
			}
			if r.own == nil {
				if v, ready, handled := r.pollArmed(cx, size); handled {
					return v, ready
				}
			}
			data, _, _, pending, err := r.f.start(cx, r.n, &r.n.rd)
			if pending {
				return future.Result[PooledBuf]{}, false
			}
			if err != nil {
				r.f.done = true
				return future.Fail[PooledBuf](r.n.opError("read", err)), true
			}
			if data != nil {
				r.f.release()
				return future.Ok(pooledBuf(append([]byte(nil), data...), nil, 0)), true
			}
			op := backend.Op{Kind: backend.KindRecv, FD: r.n.fd, Flags: backend.SelectBuffer | backend.PollFirst, BufferGroup: poolGroup, Timeout: r.n.readTimeout()}
			if r.own != nil {
				op.Flags, op.Buf = backend.PollFirst, (*r.own)[:size]
			}
			if err := r.f.submit(cx, r.n, op); err != nil {
				r.f.done = true
				return future.Fail[PooledBuf](r.n.opError("read", err)), true
			}
		}
		c, ok := r.f.wait(cx)
		if !ok {
			return future.Result[PooledBuf]{}, false
		}
		switch {
		case errors.Is(c.Err, backend.ErrNoBuffers) && r.own == nil:
			size, _ := ring.ReadPool()
			r.noBuffers(size) // a retry of the pool, or a buffer of its own
			r.f = ioFuture{armed: r.f.armed, starved: true}
			continue
		case c.Err != nil:
			return future.Fail[PooledBuf](r.n.opError("read", c.Err)), true
		case c.Flags&backend.HasBuffer != 0:
			if c.N == 0 {
				_ = ring.Backend().ReleaseBuffer(poolGroup, c.BufferID)
				return future.Result[PooledBuf]{Err: io.EOF}, true
			}
			return future.Ok(pooledBuf(ring.Backend().Buffer(poolGroup, c.BufferID)[:c.N], ring, c.BufferID)), true
		case c.N == 0:
			return future.Result[PooledBuf]{Err: io.EOF}, true
		}
		return future.Ok(pooledBuf((*r.own)[:c.N], nil, 0)), true
	}
}

// noBuffers answers a receive that found the pool empty (the data is
// still in the socket). The first time, the read tries the pool again: the
// backend gives a group that runs dry more buffers, up to its count, when
// it reports the empty pool, so that a burst of reads grows the pool rather
// than leaving a buffer of garbage per read. The second time the pool is
// spent: the read goes on with a buffer of size bytes of its own. retry
// says which.
func (r *ReadPooledFuture) noBuffers(size int) (retry bool) {
	if !r.f.starved {
		r.f.starved = true
		return true
	}
	own := make([]byte, size)
	r.own = &own
	return false
}

// Cancel abandons the read; data it received is delivered to the stream's
// next read.
func (r *ReadPooledFuture) Cancel() {
	if r.f.armed {
		r.cancelArmed()
		r.f.done = true
		return
	}
	r.f.cancel()
}
