package httpserver

// The handler goroutines: a goroutine whose handler returned parks in the
// server's pool for the next request instead of ending, so a request
// neither creates a goroutine nor grows a fresh stack again.

import (
	goruntime "runtime"
	"sync"
	"time"
)

// handlerIdleTime is how long a parked handler goroutine may wait for a
// request before it is retired (checked as goroutines come and go, so the
// last ones of a server that has gone quiet stay until Shutdown or Close).
const handlerIdleTime = 10 * time.Second

// handlerPool holds the parked handler goroutines of a Server. A
// goroutine counts against MaxHandlerGoroutines only while it runs a
// handler; parked ones are bounded by maxIdle.
type handlerPool struct {
	// mu guards the fields below (connection tasks take goroutines,
	// handler goroutines put themselves back, Shutdown and Close retire
	// them).
	mu sync.Mutex
	// idle are the parked goroutines, the most recently parked last
	// (taken first: its stack is the warmest).
	idle []*handlerG
	// maxIdle bounds idle; made by init.
	maxIdle int
	// closed is set by Shutdown or Close: from then on a goroutine whose
	// handler returns ends.
	closed bool
}

// handlerG is a parked handler goroutine.
type handlerG struct {
	// next hands the goroutine its next exchange, or nil to end it.
	// Capacity 1: a parked goroutine is handed exactly one value (by
	// whoever removed it from idle, under mu), so the send never blocks.
	next chan *exchange
	// since is when it parked. Written by the goroutine, under mu.
	since time.Time
}

func (p *handlerPool) init() {
	p.maxIdle = max(64, 4*goruntime.GOMAXPROCS(0))
}

// get takes a parked goroutine, or nil if there is none.
func (p *handlerPool) get() *handlerG {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	g := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return g
}

// put parks g, and reports false if it should end instead (the pool is
// closed or full). A goroutine parked longer than handlerIdleTime is
// retired on the way.
func (p *handlerPool) put(g *handlerG) bool {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= p.maxIdle {
		return false
	}
	if len(p.idle) > 0 && now.Sub(p.idle[0].since) > handlerIdleTime {
		old := p.idle[0]
		copy(p.idle, p.idle[1:])
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		old.next <- nil
	}
	g.since = now
	p.idle = append(p.idle, g)
	return true
}

// close ends the parked goroutines, and those whose handlers return
// after it.
func (p *handlerPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for i, g := range p.idle {
		g.next <- nil
		p.idle[i] = nil
	}
	p.idle = nil
}

// dispatch runs ex's handler on a parked goroutine, or on a new one. The
// caller holds a unit of s.sem for it, which the handler's end releases.
func (s *Server) dispatch(ex *exchange) {
	if g := s.pool.get(); g != nil {
		g.next <- ex
		return
	}
	go s.handlerLoop(ex)
}

// handlerLoop is a handler goroutine: it runs ex's handler, then parks in
// the pool for the next exchange until it is retired.
func (s *Server) handlerLoop(ex *exchange) {
	g := &handlerG{next: make(chan *exchange, 1)}
	h := s.handler()
	for ex != nil {
		s.runHandler(ex, h)
		if !s.pool.put(g) {
			return
		}
		ex = <-g.next
	}
}
