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

	gorilla "github.com/gorilla/websocket"
)

// gorilla/websocket: permessage-deflate without context takeover either
// way; NextWriter sends a fragment each time its write buffer fills.

func init() {
	peers = append(peers, peer{name: "gorilla/websocket", deflate: true, dial: gorillaDial, serve: gorillaServe})
}

type gorillaClient struct {
	c     *gorilla.Conn
	ext   string
	pongs chan string
	pingc chan string
}

func gorillaDial(t *testing.T, url string, m mode, cnt *counter) (peerClient, error) {
	d := gorilla.Dialer{
		EnableCompression: m != plain,
		HandshakeTimeout:  ioTimeout,
		WriteBufferSize:   fragChunk, // NextWriter: fragments of this size
		NetDial: func(network, addr string) (net.Conn, error) {
			c, err := net.Dial(network, addr)
			if err != nil {
				return nil, err
			}
			return countConn{Conn: c, c: cnt}, nil
		},
	}
	c, resp, err := d.Dial(url, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 30)
	g := &gorillaClient{c: c, ext: resp.Header.Get("Sec-WebSocket-Extensions"), pongs: make(chan string, 4), pingc: make(chan string, 4)}
	c.SetPongHandler(func(p string) error { g.pongs <- p; return nil })
	c.SetPingHandler(func(p string) error {
		g.pingc <- p
		return c.WriteControl(gorilla.PongMessage, []byte(p), time.Now().Add(time.Second))
	})
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	return g, nil
}

func gorillaType(binary bool) int {
	if binary {
		return gorilla.BinaryMessage
	}
	return gorilla.TextMessage
}

func (g *gorillaClient) send(binary bool, p []byte) error {
	return g.c.WriteMessage(gorillaType(binary), p)
}

func (g *gorillaClient) sendFragments(binary bool, p []byte) error {
	w, err := g.c.NextWriter(gorillaType(binary))
	if err != nil {
		return err
	}
	for _, ch := range chunks(p, fragChunk) {
		if _, err := w.Write(ch); err != nil {
			return err
		}
	}
	return w.Close()
}

func (g *gorillaClient) recv() (bool, []byte, error) {
	typ, p, err := g.c.ReadMessage()
	return typ == gorilla.BinaryMessage, p, err
}

func (g *gorillaClient) ping(p []byte) error {
	if err := g.c.WriteControl(gorilla.PingMessage, p, time.Now().Add(time.Second)); err != nil {
		return err
	}
	// The pong handler runs inside a read: read the echo of a message.
	return pongBeforeEcho(g, g.pongs, p)
}

func (g *gorillaClient) pings() <-chan string { return g.pingc }

func (g *gorillaClient) closeHandshake(code int, reason string) (closeInfo, error) {
	if err := g.c.WriteControl(gorilla.CloseMessage, gorilla.FormatCloseMessage(code, reason), time.Now().Add(time.Second)); err != nil {
		return closeInfo{}, err
	}
	return g.recvClose()
}

func (g *gorillaClient) recvClose() (closeInfo, error) {
	for {
		_, _, err := g.c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *gorilla.CloseError
		if errors.As(err, &ce) {
			return closeInfo{ce.Code, ce.Text}, nil
		}
		return closeInfo{}, err
	}
}

func (g *gorillaClient) extensions() string { return g.ext }
func (g *gorillaClient) abort()             { _ = g.c.Close() }

// gorillaServe runs gorilla's echo server on net/http.
func gorillaServe(t *testing.T, m mode, ev *events, cnt *counter) string {
	up := gorilla.Upgrader{EnableCompression: m != plain, WriteBufferSize: fragChunk}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		c.SetReadLimit(1 << 30)
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		closing := false
		c.SetPingHandler(func(p string) error {
			ev.ping(p)
			return c.WriteControl(gorilla.PongMessage, []byte(p), time.Now().Add(time.Second))
		})
		c.SetPongHandler(func(p string) error { ev.ping("pong:" + p); return nil })
		for {
			typ, p, err := c.ReadMessage()
			if err != nil {
				var ce *gorilla.CloseError
				if errors.As(err, &ce) {
					ev.closed(ce.Code, ce.Text)
					if closing {
						if ce.Code != serverCode {
							ev.handshakeDone(fmt.Errorf("client answered %d", ce.Code))
						} else {
							ev.handshakeDone(nil)
						}
					}
				}
				// gorilla's default close handler has answered the close.
				return
			}
			bin := typ == gorilla.BinaryMessage
			if isCmdClose(bin, p) {
				closing = true
				_ = c.WriteControl(gorilla.CloseMessage, gorilla.FormatCloseMessage(serverCode, serverReason), time.Now().Add(time.Second))
				continue
			}
			if rest, ok := splitCmd(bin, p, cmdPing); ok {
				_ = c.WriteControl(gorilla.PingMessage, rest, time.Now().Add(time.Second))
				continue
			}
			if rest, ok := splitCmd(bin, p, cmdFrag); ok {
				w, err := c.NextWriter(gorilla.TextMessage)
				if err != nil {
					return
				}
				for _, ch := range chunks(rest, fragChunk) {
					_, _ = w.Write(ch)
				}
				if w.Close() != nil {
					return
				}
				continue
			}
			if err := c.WriteMessage(typ, p); err != nil {
				return
			}
		}
	}))
	srv.Listener = countListener{Listener: srv.Listener, c: cnt}
	srv.Start()
	t.Cleanup(srv.Close)
	return "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/ws"
}

var _ = context.Background
