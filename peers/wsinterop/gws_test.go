package wsinterop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz/websocket"
	"github.com/lxzan/gws"
)

// lxzan/gws: event callbacks on a read loop; permessage-deflate with or
// without context takeover. It has no API that writes a message in
// fragments, and its WriteClose closes the TCP connection right after
// the close frame, without waiting for the peer's answer.

// errNoAnswer is a peer's closeHandshake that does not wait for the
// answer to its close frame.
var errNoAnswer = errors.New("the library closes the TCP connection without waiting for the answer to its close frame")

func init() {
	peers = append(peers, peer{name: "lxzan/gws", deflate: true, dial: gwsDial, serve: gwsServe,
		noFrag: "gws has no API that writes a message in fragments"})
}

// gwsDeflate is gws's compression for m. With context takeover gws
// defaults to windows of 12 bits, and its server then answers with
// client_max_window_bits=12 though the client did not offer the parameter
// (RFC 7692 section 7.1.2.2 forbids it; compress/flate cannot keep to a
// window under 15 bits either): the windows are set to 15 here, and
// TestGwsDefaultWindows checks that our client refuses the default.
func gwsDeflate(m mode) gws.PermessageDeflate {
	return gws.PermessageDeflate{
		Enabled:               m != plain,
		ServerContextTakeover: m == takeover,
		ClientContextTakeover: m == takeover,
		ServerMaxWindowBits:   15,
		ClientMaxWindowBits:   15,
	}
}

// TestGwsDefaultWindows: a gws server with context takeover and its
// default windows answers with a client_max_window_bits our client did
// not offer; our client fails the handshake with ErrBadHandshake.
func TestGwsDefaultWindows(t *testing.T) {
	up := gws.NewUpgrader(gwsServer{newEvents()}, &gws.ServerOption{PermessageDeflate: gws.PermessageDeflate{
		Enabled: true, ServerContextTakeover: true, ClientContextTakeover: true}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := up.Upgrade(w, r); err == nil {
			c.ReadLoop()
		}
	}))
	defer srv.Close()
	rt := ourRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	c, resp, err := websocket.DialContext(ctx, rt.Handle(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws",
		&websocket.DialOptions{Compression: takeover.options()})
	if err == nil {
		_ = c.CloseNow()
		t.Fatal("handshake accepted")
	}
	if !errors.Is(err, websocket.ErrBadHandshake) || !strings.Contains(err.Error(), "client_max_window_bits") {
		t.Fatalf("error %v", err)
	}
	t.Logf("gws answered %q; our client: %v", resp.Header.Get("Sec-WebSocket-Extensions"), err)

	// The gws client with its default windows offers only
	// client_max_window_bits (it will compress within 12 bits, which any
	// inflater reads): our server agrees, and messages go both ways.
	url := startOurServer(t, takeover, newEvents())
	g := &gwsClient{msgs: make(chan gwsMsg, 4), closes: make(chan closeInfo, 1), pongs: make(chan string, 4),
		pingc: make(chan string, 4), done: make(chan struct{})}
	gc, gresp, err := gws.NewClient(g, &gws.ClientOption{Addr: url, PermessageDeflate: gws.PermessageDeflate{
		Enabled: true, ServerContextTakeover: true, ClientContextTakeover: true}})
	if err != nil {
		t.Fatalf("gws client: %v", err)
	}
	g.c = gc
	go func() {
		defer close(g.done)
		gc.ReadLoop()
	}()
	defer g.abort()
	ext := gresp.Header.Get("Sec-WebSocket-Extensions")
	t.Logf("gws client, default windows: our server answered %q", ext)
	if ext != "permessage-deflate" {
		t.Fatalf("our server answered %q", ext)
	}
	for range 3 {
		msg := payload(50000, false)
		if err := g.send(false, msg); err != nil {
			t.Fatal(err)
		}
		if _, p, err := g.recv(); err != nil || string(p) != string(msg) {
			t.Fatalf("echo of %d bytes, %v", len(p), err)
		}
	}
}

type gwsMsg struct {
	binary bool
	data   []byte
}

// gwsClient turns gws's callbacks into channels.
type gwsClient struct {
	c      *gws.Conn
	ext    string
	msgs   chan gwsMsg
	closes chan closeInfo
	pongs  chan string
	pingc  chan string
	done   chan struct{}
}

func (g *gwsClient) OnOpen(*gws.Conn) {}

func (g *gwsClient) OnClose(_ *gws.Conn, err error) {
	var ce *gws.CloseError
	if errors.As(err, &ce) {
		g.closes <- closeInfo{int(ce.Code), string(ce.Reason)}
	} else {
		g.closes <- closeInfo{-1, fmt.Sprint(err)}
	}
}

func (g *gwsClient) OnPing(c *gws.Conn, p []byte) {
	g.pingc <- string(p)
	_ = c.WritePong(p)
}

func (g *gwsClient) OnPong(_ *gws.Conn, p []byte) { g.pongs <- string(p) }

func (g *gwsClient) OnMessage(_ *gws.Conn, m *gws.Message) {
	g.msgs <- gwsMsg{m.Opcode == gws.OpcodeBinary, append([]byte(nil), m.Bytes()...)}
	_ = m.Close()
}

type gwsDialer struct{ cnt *counter }

func (d gwsDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return countConn{Conn: c, c: d.cnt}, nil
}

func gwsDial(t *testing.T, url string, m mode, cnt *counter) (peerClient, error) {
	g := &gwsClient{msgs: make(chan gwsMsg, 4), closes: make(chan closeInfo, 1), pongs: make(chan string, 4),
		pingc: make(chan string, 4), done: make(chan struct{})}
	c, resp, err := gws.NewClient(g, &gws.ClientOption{
		Addr:               url,
		PermessageDeflate:  gwsDeflate(m),
		CheckUtf8Enabled:   true,
		ReadMaxPayloadSize: 1 << 30,
		HandshakeTimeout:   ioTimeout,
		NewDialer:          func() (gws.Dialer, error) { return gwsDialer{cnt}, nil },
	})
	if err != nil {
		return nil, err
	}
	g.c, g.ext = c, resp.Header.Get("Sec-WebSocket-Extensions")
	go func() {
		defer close(g.done)
		c.ReadLoop()
	}()
	return g, nil
}

func gwsOp(binary bool) gws.Opcode {
	if binary {
		return gws.OpcodeBinary
	}
	return gws.OpcodeText
}

func (g *gwsClient) send(binary bool, p []byte) error { return g.c.WriteMessage(gwsOp(binary), p) }

func (g *gwsClient) sendFragments(bool, []byte) error { return errNA }

func (g *gwsClient) recv() (bool, []byte, error) {
	select {
	case m := <-g.msgs:
		return m.binary, m.data, nil
	case ci := <-g.closes:
		return false, nil, fmt.Errorf("closed: %+v", ci)
	case <-time.After(ioTimeout):
		return false, nil, errors.New("timeout")
	}
}

func (g *gwsClient) ping(p []byte) error {
	if err := g.c.WritePing(p); err != nil {
		return err
	}
	select {
	case got := <-g.pongs:
		if got != string(p) {
			return fmt.Errorf("pong %q", got)
		}
		return nil
	case <-time.After(ioTimeout):
		return errors.New("no pong")
	}
}

func (g *gwsClient) pings() <-chan string { return g.pingc }

func (g *gwsClient) closeHandshake(code int, reason string) (closeInfo, error) {
	if err := g.c.WriteClose(uint16(code), []byte(reason)); err != nil {
		return closeInfo{}, err
	}
	<-g.done
	return closeInfo{}, errNoAnswer
}

func (g *gwsClient) recvClose() (closeInfo, error) {
	for {
		select {
		case <-g.msgs:
		case ci := <-g.closes:
			return ci, nil
		case <-time.After(ioTimeout):
			return closeInfo{}, errors.New("timeout")
		}
	}
}

func (g *gwsClient) extensions() string { return g.ext }

func (g *gwsClient) abort() {
	_ = g.c.NetConn().Close()
	<-g.done
}

// gwsServer is gws's echo server's event handler.
type gwsServer struct {
	ev *events
}

func (s gwsServer) OnOpen(*gws.Conn) {}

func (s gwsServer) OnClose(_ *gws.Conn, err error) {
	var ce *gws.CloseError
	if errors.As(err, &ce) {
		s.ev.closed(int(ce.Code), string(ce.Reason))
	}
}

func (s gwsServer) OnPing(c *gws.Conn, p []byte) {
	s.ev.ping(string(p))
	_ = c.WritePong(p)
}

func (s gwsServer) OnPong(_ *gws.Conn, p []byte) { s.ev.ping("pong:" + string(p)) }

func (s gwsServer) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	bin := m.Opcode == gws.OpcodeBinary
	p := m.Bytes()
	if isCmdClose(bin, p) {
		_ = c.WriteClose(serverCode, []byte(serverReason))
		s.ev.handshakeDone(errNoAnswer)
		return
	}
	if rest, ok := splitCmd(bin, p, cmdPing); ok {
		_ = c.WritePing(rest)
		return
	}
	_ = c.WriteMessage(m.Opcode, p)
}

func gwsServe(t *testing.T, m mode, ev *events, cnt *counter) string {
	up := gws.NewUpgrader(gwsServer{ev}, &gws.ServerOption{
		PermessageDeflate:  gwsDeflate(m),
		CheckUtf8Enabled:   true,
		ReadMaxPayloadSize: 1 << 30,
	})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r)
		if err != nil {
			return
		}
		c.ReadLoop()
	}))
	srv.Listener = countListener{Listener: srv.Listener, c: cnt}
	srv.Start()
	t.Cleanup(srv.Close)
	return "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/ws"
}
