//go:build linux

package peers

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	gorilla "github.com/gorilla/websocket"
	"github.com/lesismal/nbio/nbhttp"
	nbws "github.com/lesismal/nbio/nbhttp/websocket"
	"github.com/lxzan/gws"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/websocket"
)

// The WebSocket servers (mode WS): each echoes every data message back,
// as the same type, and broadcasts a message to every open connection on
// Server.Broadcast, in the way its library offers for that:
//
//   - blitz-ws: blitz's websocket package on httpserver, a connection a
//     task after the upgrade; broadcast with a PreparedMessage and a
//     Broadcaster (a bounded queue and a sender task per connection).
//   - gorilla: gorilla/websocket on net/http, a goroutine per connection;
//     broadcast with a PreparedMessage, written by a goroutine per
//     connection under the connection's write lock.
//   - coder: coder/websocket on net/http, a goroutine per connection;
//     broadcast with Conn.Write (safe for concurrent use) from a
//     goroutine per connection: each connection encodes the message.
//   - gobwas: gobwas/ws (v1.4.0) on Go's listener, a goroutine per
//     connection with wsutil's reader and writer; broadcast with the
//     frame compiled once (ws.CompileFrame) and its bytes written by a
//     goroutine per connection under the connection's write lock.
//   - gws: lxzan/gws on net/http, a goroutine per connection (its
//     ReadLoop); broadcast with gws.Broadcaster, which encodes once and
//     writes through each connection's own asynchronous queue.
//   - nbio: lesismal/nbio's websocket on its nbhttp engine, in its
//     default non-blocking mode (event loops, no goroutine per
//     connection; the handlers run on its executor); broadcast with
//     Conn.WriteMessage, a goroutine per connection as for gobwas.
//
// None negotiates compression.

// wsConns is the set of open connections of a goroutine-per-connection
// server, for broadcasts and for Stop.
type wsConns[C comparable] struct {
	mu    sync.Mutex
	conns map[C]*sync.Mutex // the connection's write lock
	wg    sync.WaitGroup
}

func newWSConns[C comparable]() *wsConns[C] {
	return &wsConns[C]{conns: map[C]*sync.Mutex{}}
}

func (s *wsConns[C]) add(c C) *sync.Mutex {
	mu := new(sync.Mutex)
	s.mu.Lock()
	s.conns[c] = mu
	s.mu.Unlock()
	return mu
}

func (s *wsConns[C]) remove(c C) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// each runs write on every connection, a goroutine each, under the
// connection's write lock, and waits for them all.
func (s *wsConns[C]) each(write func(C) error) error {
	s.mu.Lock()
	errs := make([]error, 0, len(s.conns))
	var emu sync.Mutex
	var wg sync.WaitGroup
	for c, mu := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			err := write(c)
			mu.Unlock()
			if err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	s.mu.Unlock()
	wg.Wait()
	return errors.Join(errs...)
}

// broadcastPayload is the message a server broadcasts: size bytes of
// text.
func broadcastPayload(size int) []byte {
	p := make([]byte, size)
	for i := range p {
		p[i] = 'a' + byte(i%26)
	}
	return p
}

// serveNetHTTP runs h on a net/http server listening on addr; stop ends
// the server and then calls closeAll, which must end the connections'
// goroutines, and waits for wg.
func serveNetHTTP(addr string, h http.HandlerFunc, closeAll func(), wg *sync.WaitGroup, broadcast func(int) error) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	return &Server{Addr: l.Addr().String(), Broadcast: broadcast, Stop: func() error {
		err := srv.Close() // hijacked connections are not closed by it
		if e := <-done; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		closeAll()
		wg.Wait()
		return err
	}}, nil
}

// startGorillaWS is the gorilla/websocket server.
func startGorillaWS(addr string) (*Server, error) {
	set := newWSConns[*gorilla.Conn]()
	up := gorilla.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}
	h := func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		set.wg.Add(1)
		defer set.wg.Done()
		mu := set.add(c)
		defer func() { set.remove(c); c.Close() }()
		for {
			typ, p, err := c.ReadMessage()
			if err != nil {
				return
			}
			mu.Lock()
			err = c.WriteMessage(typ, p)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}
	broadcast := func(size int) error {
		pm, err := gorilla.NewPreparedMessage(gorilla.TextMessage, broadcastPayload(size))
		if err != nil {
			return err
		}
		return set.each(func(c *gorilla.Conn) error { return c.WritePreparedMessage(pm) })
	}
	closeAll := func() {
		set.mu.Lock()
		for c := range set.conns {
			c.Close()
		}
		set.mu.Unlock()
	}
	return serveNetHTTP(addr, h, closeAll, &set.wg, broadcast)
}

// startCoderWS is the coder/websocket server.
func startCoderWS(addr string) (*Server, error) {
	set := newWSConns[*coder.Conn]()
	h := func(w http.ResponseWriter, r *http.Request) {
		c, err := coder.Accept(w, r, &coder.AcceptOptions{CompressionMode: coder.CompressionDisabled})
		if err != nil {
			return
		}
		set.wg.Add(1)
		defer set.wg.Done()
		set.add(c)
		defer func() { set.remove(c); _ = c.CloseNow() }()
		c.SetReadLimit(1 << 24)
		ctx := context.Background()
		for {
			typ, p, err := c.Read(ctx)
			if err != nil {
				return
			}
			if err := c.Write(ctx, typ, p); err != nil {
				return
			}
		}
	}
	broadcast := func(size int) error {
		p := broadcastPayload(size)
		return set.each(func(c *coder.Conn) error { return c.Write(context.Background(), coder.MessageText, p) })
	}
	closeAll := func() {
		set.mu.Lock()
		for c := range set.conns {
			_ = c.CloseNow()
		}
		set.mu.Unlock()
	}
	return serveNetHTTP(addr, h, closeAll, &set.wg, broadcast)
}

// startGobwasWS is the gobwas/ws server on Go's listener.
func startGobwasWS(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	set := newWSConns[net.Conn]()
	set.wg.Add(1)
	go func() {
		defer set.wg.Done()
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			set.wg.Add(1)
			go func() {
				defer set.wg.Done()
				defer nc.Close()
				if _, err := ws.Upgrade(nc); err != nil {
					return
				}
				mu := set.add(nc)
				defer set.remove(nc)
				for {
					p, op, err := wsutil.ReadClientData(nc)
					if err != nil {
						return
					}
					mu.Lock()
					err = wsutil.WriteServerMessage(nc, op, p)
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	broadcast := func(size int) error {
		frame, err := ws.CompileFrame(ws.NewTextFrame(broadcastPayload(size)))
		if err != nil {
			return err
		}
		return set.each(func(nc net.Conn) error {
			_, err := nc.Write(frame)
			return err
		})
	}
	return &Server{Addr: l.Addr().String(), Broadcast: broadcast, Stop: func() error {
		err := l.Close()
		set.mu.Lock()
		for c := range set.conns {
			c.Close()
		}
		set.mu.Unlock()
		set.wg.Wait()
		return err
	}}, nil
}

// gwsEcho is the gws server's event handler.
type gwsEcho struct {
	gws.BuiltinEventHandler
	mu    sync.Mutex
	conns map[*gws.Conn]struct{}
}

func (g *gwsEcho) OnOpen(c *gws.Conn) {
	g.mu.Lock()
	g.conns[c] = struct{}{}
	g.mu.Unlock()
}

func (g *gwsEcho) OnClose(c *gws.Conn, _ error) {
	g.mu.Lock()
	delete(g.conns, c)
	g.mu.Unlock()
}

func (g *gwsEcho) OnMessage(c *gws.Conn, m *gws.Message) {
	_ = c.WriteMessage(m.Opcode, m.Bytes())
	m.Close()
}

// startGwsWS is the lxzan/gws server.
func startGwsWS(addr string) (*Server, error) {
	ev := &gwsEcho{conns: map[*gws.Conn]struct{}{}}
	up := gws.NewUpgrader(ev, &gws.ServerOption{ReadMaxPayloadSize: 1 << 24})
	var wg sync.WaitGroup
	h := func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		c.ReadLoop()
	}
	broadcast := func(size int) error {
		b := gws.NewBroadcaster(gws.OpcodeText, broadcastPayload(size))
		defer b.Close()
		ev.mu.Lock()
		defer ev.mu.Unlock()
		var errs []error
		for c := range ev.conns {
			if err := b.Broadcast(c); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	closeAll := func() {
		ev.mu.Lock()
		for c := range ev.conns {
			_ = c.NetConn().Close()
		}
		ev.mu.Unlock()
	}
	return serveNetHTTP(addr, h, closeAll, &wg, broadcast)
}

// startBlitzWS is blitz's websocket server on httpserver, on backend (""
// for the default: io_uring where the kernel allows it).
func startBlitzWS(addr, backend string) (*Server, error) {
	rt, l, err := listenBlitz(addr, blitzPooled(backend))
	if err != nil {
		return nil, err
	}
	room := websocket.NewBroadcaster(rt.Handle(), &websocket.BroadcastOptions{QueueLen: 64})
	var up websocket.Upgrader
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		room.Add(c)
		blitz.SpawnValueDetachedOn[struct{}](rt.Handle(), blitzWSEcho{c: c, room: room})
	}), ReadHeaderTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(rt.Handle(), l) }()
	broadcast := func(size int) error {
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, broadcastPayload(size), nil)
		if err != nil {
			return err
		}
		room.Broadcast(pm)
		return nil
	}
	return &Server{Addr: l.AddrPort().String(), ReadPool: blitzReadBuffers * blitzReadBufferSize, Broadcast: broadcast, Stop: func() error {
		err := srv.Close()
		if e := <-done; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		return errors.Join(err, rt.Shutdown(context.Background()))
	}}, nil
}

// startBlitzWSStream is the blitz WebSocket server without an HTTP
// server: blitz.Serve accepts, and each connection's task reads and
// answers the opening handshake itself (Upgrader.UpgradeStream), then
// echoes, as blitzWSEcho does, in the same task.
func startBlitzWSStream(addr, backend string) (*Server, error) {
	rt, l, err := listenBlitz(addr, blitzPooled(backend))
	if err != nil {
		return nil, err
	}
	room := websocket.NewBroadcaster(rt.Handle(), &websocket.BroadcastOptions{QueueLen: 64})
	up := &websocket.Upgrader{}
	srv := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, func(s *blitz.TCPStream) future.Future[error] {
		return &blitzWSStream{uf: up.UpgradeStream(s, nil), e: blitzWSEcho{room: room}}
	}, blitz.ServeConfig{}))
	broadcast := func(size int) error {
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, broadcastPayload(size), nil)
		if err != nil {
			return err
		}
		room.Broadcast(pm)
		return nil
	}
	return &Server{Addr: l.AddrPort().String(), ReadPool: blitzReadBuffers * blitzReadBufferSize, Broadcast: broadcast, Stop: func() error {
		srv.Cancel()
		_, _ = srv.Wait(context.Background())
		return rt.Shutdown(context.Background())
	}}, nil
}

// blitzWSStream is a connection's task on the server without an HTTP
// server: the handshake, then the echo.
type blitzWSStream struct {
	uf *websocket.UpgradeFuture
	e  blitzWSEcho
}

func (f *blitzWSStream) Poll(cx *future.Context) (error, bool) {
	if f.uf != nil {
		r, ok := f.uf.Poll(cx)
		if !ok {
			return nil, false
		}
		f.uf = nil
		if r.Err != nil {
			return r.Err, true // UpgradeStream answered and closed the stream
		}
		f.e.c = r.Value
		f.e.room.Add(r.Value)
	}
	_, ok := f.e.Poll(cx)
	return nil, ok
}

func (f *blitzWSStream) Cancel() {
	if f.uf != nil {
		f.uf.Cancel()
		return
	}
	f.e.Cancel()
}

// blitzWSEcho is a connection's task on the blitz server: it echoes each
// message until the read fails, then closes and leaves the room.
type blitzWSEcho struct {
	c    *websocket.Conn
	room *websocket.Broadcaster
	rf   *websocket.ReadFuture
	wf   *websocket.WriteFuture
}

func (e *blitzWSEcho) Poll(cx *future.Context) (struct{}, bool) {
	for {
		if e.wf != nil {
			r, ok := e.wf.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			e.wf = nil
			if r.Err != nil {
				e.end()
				return struct{}{}, true
			}
		}
		if e.rf == nil {
			e.rf = e.c.ReadMessage()
		}
		r, ok := e.rf.Poll(cx)
		if !ok {
			return struct{}{}, false
		}
		e.rf = nil
		if r.Err != nil {
			e.end()
			return struct{}{}, true
		}
		e.wf = e.c.WriteMessage(r.Value.Type, r.Value.Data)
	}
}

// end leaves the room and closes the connection (the peer's close frame
// was answered by the read).
func (e *blitzWSEcho) end() {
	e.room.Remove(e.c)
	_ = e.c.CloseNow()
}

func (e *blitzWSEcho) Cancel() {
	if e.rf != nil {
		e.rf.Cancel()
	}
	if e.wf != nil {
		e.wf.Cancel()
	}
	e.end()
}

// startNbioWS is nbio's websocket server on its own HTTP engine, with the
// library's defaults (non-blocking mode).
func startNbioWS(addr string) (*Server, error) {
	addr, err := fixedPort(addr)
	if err != nil {
		return nil, err
	}
	set := newWSConns[*nbws.Conn]()
	up := nbws.NewUpgrader()
	up.OnOpen(func(c *nbws.Conn) { set.add(c) })
	up.OnClose(func(c *nbws.Conn, _ error) { set.remove(c) })
	up.OnMessage(func(c *nbws.Conn, mt nbws.MessageType, data []byte) { _ = c.WriteMessage(mt, data) })
	e := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp", Addrs: []string{addr}, MaxLoad: 1 << 20,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = up.Upgrade(w, r, nil) }),
	})
	if err := e.Start(); err != nil {
		return nil, err
	}
	broadcast := func(size int) error {
		p := broadcastPayload(size)
		return set.each(func(c *nbws.Conn) error { return c.WriteMessage(nbws.TextMessage, p) })
	}
	return &Server{Addr: addr, Broadcast: broadcast, Stop: func() error { e.Stop(); return nil }}, nil
}
