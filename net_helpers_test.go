package blitz_test

import (
	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// echoConn is an echo handler written as a task's state machine: read into
// buf, write it all back, until end of stream or an error. The futures it
// waits on live inside it.
type echoConn struct {
	s     *blitz.TCPStream
	buf   [64]byte
	state int
	rd    *blitz.ReadFuture
	wr    *blitz.WriteAllFuture
	bytes int
}

func (e *echoConn) Poll(cx *future.Context) (int, bool) {
	for {
		switch e.state {
		case 0:
			e.rd = e.s.Read(e.buf[:])
			e.state = 1
		case 1:
			r, ok := e.rd.Poll(cx)
			if !ok {
				return 0, false
			}
			if r.Err != nil {
				_ = e.s.Close()
				return e.bytes, true
			}
			e.wr = e.s.WriteAll(e.buf[:r.Value])
			e.state = 2
		case 2:
			r, ok := e.wr.Poll(cx)
			if !ok {
				return 0, false
			}
			e.bytes += r.Value
			if r.Err != nil {
				_ = e.s.Close()
				return e.bytes, true
			}
			e.state = 0
		}
	}
}

// acceptLoop accepts connections and spawns an echoConn for each, until the
// listener is closed.
type acceptLoop struct {
	l        *blitz.TCPListener
	polled   bool // spawn an echo (the type of ExamplePooledBuf_Advance) instead
	acc      *blitz.AcceptFuture[*blitz.TCPStream]
	started  bool
	accepted int
}

func (a *acceptLoop) Poll(cx *future.Context) (int, bool) {
	for {
		if !a.started {
			a.acc = a.l.Accept()
			a.started = true
		}
		r, ok := a.acc.Poll(cx)
		if !ok {
			return 0, false
		}
		a.started = false
		if r.Err != nil {
			return a.accepted, true
		}
		a.accepted++
		if a.polled {
			blitz.Spawn(cx, future.Future[error](&echo{s: r.Value})).Detach() // ExamplePooledBuf_Advance's
			continue
		}
		blitz.Spawn(cx, future.Future[int](&echoConn{s: r.Value})).Detach()
	}
}
