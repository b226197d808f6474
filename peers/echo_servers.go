//go:build linux

package peers

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/lesismal/nbio"
	"github.com/panjf2000/gnet/v2"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// startGoNetEcho is the goroutine-per-connection echo server of Go's net
// package, each connection with a 4 KiB buffer, as a plain Go server is
// written.
func startGoNetEcho(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						break
					}
					if _, err := c.Write(buf[:n]); err != nil {
						break
					}
				}
				c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	return &Server{Addr: l.Addr().String(), Stop: func() error {
		err := l.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		return err
	}}, nil
}

// blitzEcho is the echo connection of the blitz server: each read takes a
// buffer from the runtime's pool, which goes back to the pool before the
// connection waits again, so an idle connection holds no buffer.
func blitzEcho(s *blitz.TCPStream) future.Future[error] {
	return &blitzEchoFuture{s: s}
}

// blitzEchoFuture is blitzEcho's future: read a pooled buffer, write it
// back, release it, again, until EOF.
type blitzEchoFuture struct {
	s     *blitz.TCPStream
	read  *blitz.ReadPooledFuture
	write *blitz.WriteAllFuture
	buf   blitz.PooledBuf
}

// Poll runs the loop until it waits or the connection ends.
func (f *blitzEchoFuture) Poll(cx *future.Context) (error, bool) {
	for {
		if f.write != nil {
			r, ok := f.write.Poll(cx)
			if !ok {
				return nil, false
			}
			f.write = nil
			f.buf.Release()
			if r.Err != nil {
				return f.end(r.Err)
			}
		}
		if f.read == nil {
			f.read = f.s.ReadPooled()
		}
		r, ok := f.read.Poll(cx)
		if !ok {
			return nil, false
		}
		f.read = nil
		if r.Err != nil {
			return f.end(r.Err)
		}
		f.buf = r.Value
		f.write = f.s.WriteAll(f.buf.Bytes())
	}
}

// end closes the stream; EOF is the normal end.
func (f *blitzEchoFuture) end(err error) (error, bool) {
	f.s.Close()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err, true
}

// Cancel cancels the operation in flight and closes the stream.
func (f *blitzEchoFuture) Cancel() {
	if f.read != nil {
		f.read.Cancel()
	}
	if f.write != nil {
		f.write.Cancel()
		f.buf.Release()
	}
	f.s.Close()
}

// blitzPollEcho is the echo connection of the blitz server written as a
// protocol's connection is (the runtime's HTTP and WebSocket servers
// are): a future that polls the stream's own pooled read (PollReadPooled)
// and writes with PollWrite, which keeps no write future once the write
// is out. So an idle connection holds its task, its socket and this
// record, and nothing for the write it finished.
func blitzPollEcho(s *blitz.TCPStream) future.Future[error] {
	return &blitzPollEchoFuture{s: s}
}

// blitzPollEchoFuture is blitzPollEcho's future: buf is the rest of the
// data being written back (none while reading), which Advance moves on as
// the writes take it.
type blitzPollEchoFuture struct {
	s   *blitz.TCPStream
	buf blitz.PooledBuf
}

// Poll runs the loop until it waits or the connection ends.
func (f *blitzPollEchoFuture) Poll(cx *future.Context) (error, bool) {
	for {
		if data := f.buf.Bytes(); len(data) > 0 {
			r, ok := f.s.PollWrite(cx, data)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return f.end(r.Err)
			}
			if f.buf = f.buf.Advance(r.Value); len(f.buf.Bytes()) > 0 {
				continue
			}
			f.buf.Release()
			f.buf = blitz.PooledBuf{}
		}
		r, ok := f.s.PollReadPooled(cx)
		if !ok {
			return nil, false
		}
		if r.Err != nil {
			return f.end(r.Err)
		}
		f.buf = r.Value
	}
}

// end releases the buffer and closes the stream; EOF is the normal end.
func (f *blitzPollEchoFuture) end(err error) (error, bool) {
	f.buf.Release()
	f.buf = blitz.PooledBuf{}
	f.s.Close()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err, true
}

// Cancel abandons the read or write in flight and closes the stream.
func (f *blitzPollEchoFuture) Cancel() {
	f.s.CancelRead()
	f.s.CancelWrite()
	f.buf.Release()
	f.buf = blitz.PooledBuf{}
	f.s.Close()
}

// The blitz servers' read pool: the runtime's defaults, named so that a
// report can tell the pool's size.
const (
	blitzReadBuffers    = 1024
	blitzReadBufferSize = 4096
)

// startBlitzEcho is the blitz echo server of handler on backend ("" for the default:
// io_uring where the kernel allows it).
func startBlitzEcho(addr, backend string, handler func(*blitz.TCPStream) future.Future[error]) (*Server, error) {
	rt, l, err := listenBlitz(addr, blitzPooled(backend))
	if err != nil {
		return nil, err
	}
	srv := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, handler, blitz.ServeConfig{}))
	return &Server{Addr: l.AddrPort().String(), ReadPool: blitzReadBuffers * blitzReadBufferSize, Stop: func() error {
		_ = l.Close()
		_, err := srv.Wait(context.Background())
		return errors.Join(err, rt.Shutdown(context.Background()))
	}}, nil
}

// gnetEcho is gnet's echo handler.
type gnetEcho struct {
	gnet.BuiltinEventEngine
	eng   gnet.Engine
	ready chan struct{}
}

func (g *gnetEcho) OnBoot(eng gnet.Engine) gnet.Action {
	g.eng = eng
	close(g.ready)
	return gnet.None
}

func (g *gnetEcho) OnTraffic(c gnet.Conn) gnet.Action {
	buf, _ := c.Next(-1)
	_, _ = c.Write(buf)
	return gnet.None
}

// startGnetEcho is gnet v2's echo server, one event loop per core. gnet
// takes a fixed address, so addr must name a port.
func startGnetEcho(addr string) (*Server, error) {
	addr, err := fixedPort(addr)
	if err != nil {
		return nil, err
	}
	g := &gnetEcho{ready: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- gnet.Run(g, "tcp://"+addr, gnet.WithMulticore(true)) }()
	select {
	case <-g.ready:
	case err := <-done:
		return nil, err
	}
	return &Server{Addr: addr, Stop: func() error {
		err := g.eng.Stop(context.Background())
		return errors.Join(err, <-done)
	}}, nil
}

// startNbioEcho is nbio's echo server.
func startNbioEcho(addr string) (*Server, error) {
	addr, err := fixedPort(addr)
	if err != nil {
		return nil, err
	}
	e := nbio.NewEngine(nbio.Config{Network: "tcp", Addrs: []string{addr}})
	e.OnData(func(c *nbio.Conn, data []byte) { _, _ = c.Write(data) })
	if err := e.Start(); err != nil {
		return nil, err
	}
	return &Server{Addr: addr, Stop: func() error { e.Stop(); return nil }}, nil
}

// fixedPort turns an address with port 0 into one with a free port, for
// the servers that cannot report the port they were given.
func fixedPort(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port != "0" {
		return addr, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
