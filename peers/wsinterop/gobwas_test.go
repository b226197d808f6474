package wsinterop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"
)

// gobwas/ws: the handshake (ws.Dialer, ws.HTTPUpgrader with
// wsflate.Extension), frames (ws.ReadFrame, ws.WriteFrame) and
// permessage-deflate without context takeover (wsflate) are the
// library's; gathering fragments and answering control frames, which
// gobwas leaves to its user at this level, are this file's.

func init() {
	peers = append(peers, peer{name: "gobwas/ws", deflate: true, dial: gobwasDial, serve: gobwasServe})
}

// gobwasConn is one side of a connection on gobwas's frame API.
type gobwasConn struct {
	nc      net.Conn
	r       io.Reader
	client  bool
	deflate bool
	ext     string
	onPing  func(string)
	onPong  func(string)
	wmu     sync.Mutex
	pingc   chan string
	pongs   chan string
}

func newGobwasConn(nc net.Conn, br *bufio.Reader, client bool, exts []httphead.Option) *gobwasConn {
	g := &gobwasConn{nc: nc, r: nc, client: client}
	if br != nil && br.Buffered() > 0 {
		g.r = io.MultiReader(br, nc)
	}
	for _, o := range exts {
		if string(o.Name) == wsflate.ExtensionName {
			g.deflate, g.ext = true, string(o.Name)
			o.Parameters.ForEach(func(k, v []byte) bool {
				g.ext += "; " + string(k)
				if len(v) > 0 {
					g.ext += "=" + string(v)
				}
				return true
			})
		}
	}
	return g
}

func (g *gobwasConn) writeFrame(f ws.Frame) error {
	if g.client {
		f = ws.MaskFrameInPlace(f)
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	_ = g.nc.SetWriteDeadline(time.Now().Add(ioTimeout))
	return ws.WriteFrame(g.nc, f)
}

func gobwasOp(binary bool) ws.OpCode {
	if binary {
		return ws.OpBinary
	}
	return ws.OpText
}

func (g *gobwasConn) send(binary bool, p []byte) error {
	f := ws.NewFrame(gobwasOp(binary), true, append([]byte(nil), p...))
	if g.deflate && len(p) > 0 {
		var err error
		if f, err = wsflate.CompressFrame(f); err != nil {
			return err
		}
	}
	return g.writeFrame(f)
}

// sendFragments sends p in fragments; a compressed message is one
// DEFLATE stream cut into fragments, RSV1 on the first.
func (g *gobwasConn) sendFragments(binary bool, p []byte) error {
	data, compressed := p, false
	if g.deflate && len(p) > 0 {
		var err error
		if data, err = wsflate.DefaultHelper.Compress(p); err != nil {
			return err
		}
		compressed = true
	}
	parts := chunks(data, fragChunk)
	for i, ch := range parts {
		op := ws.OpContinuation
		if i == 0 {
			op = gobwasOp(binary)
		}
		f := ws.NewFrame(op, i == len(parts)-1, append([]byte(nil), ch...))
		if i == 0 && compressed {
			var err error
			if f.Header, err = wsflate.SetBit(f.Header); err != nil {
				return err
			}
		}
		if err := g.writeFrame(f); err != nil {
			return err
		}
	}
	return nil
}

// errGobwasClose carries the peer's close frame out of recv.
type errGobwasClose struct{ ci closeInfo }

func (e errGobwasClose) Error() string {
	return fmt.Sprintf("close frame %d %q", e.ci.code, e.ci.reason)
}

// recv reads the next data message, answering pings; a close frame is
// answered with its code and returned as errGobwasClose.
func (g *gobwasConn) recv() (bool, []byte, error) {
	var (
		op         ws.OpCode
		compressed bool
		msg        []byte
	)
	_ = g.nc.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		f, err := ws.ReadFrame(g.r)
		if err != nil {
			return false, nil, err
		}
		if f.Header.Masked {
			ws.Cipher(f.Payload, f.Header.Mask, 0)
		}
		switch f.Header.OpCode {
		case ws.OpPing:
			if g.onPing != nil {
				g.onPing(string(f.Payload))
			}
			if err := g.writeFrame(ws.NewPongFrame(f.Payload)); err != nil {
				return false, nil, err
			}
			continue
		case ws.OpPong:
			if g.onPong != nil {
				g.onPong(string(f.Payload))
			}
			continue
		case ws.OpClose:
			code, reason := ws.ParseCloseFrameData(f.Payload)
			_ = g.writeFrame(ws.NewCloseFrame(ws.NewCloseFrameBody(code, "")))
			return false, nil, errGobwasClose{closeInfo{int(code), reason}}
		case ws.OpContinuation:
		default:
			op = f.Header.OpCode
			_, compressed, err = wsflate.UnsetBit(f.Header)
			if err != nil {
				return false, nil, err
			}
			msg = msg[:0]
		}
		msg = append(msg, f.Payload...)
		if !f.Header.Fin {
			continue
		}
		if compressed {
			if msg, err = wsflate.DefaultHelper.Decompress(msg); err != nil {
				return false, nil, err
			}
		}
		return op == ws.OpBinary, msg, nil
	}
}

func (g *gobwasConn) ping(p []byte) error {
	if err := g.writeFrame(ws.NewPingFrame(append([]byte(nil), p...))); err != nil {
		return err
	}
	return pongBeforeEcho(g, g.pongs, p)
}

func (g *gobwasConn) pings() <-chan string { return g.pingc }

func (g *gobwasConn) closeHandshake(code int, reason string) (closeInfo, error) {
	if err := g.writeFrame(ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusCode(code), reason))); err != nil {
		return closeInfo{}, err
	}
	return g.recvClose()
}

func (g *gobwasConn) recvClose() (closeInfo, error) {
	for {
		_, _, err := g.recv()
		var ce errGobwasClose
		if errors.As(err, &ce) {
			return ce.ci, nil
		}
		if err != nil {
			return closeInfo{}, err
		}
	}
}

func (g *gobwasConn) extensions() string { return g.ext }
func (g *gobwasConn) abort()             { _ = g.nc.Close() }

func gobwasDial(t *testing.T, url string, m mode, cnt *counter) (peerClient, error) {
	d := ws.Dialer{
		Timeout: ioTimeout,
		NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countConn{Conn: c, c: cnt}, nil
		},
	}
	if m != plain {
		// No context takeover either way: wsflate's helpers keep none.
		d.Extensions = []httphead.Option{wsflate.DefaultParameters.Option()}
	}
	nc, br, hs, err := d.Dial(context.Background(), url)
	if err != nil {
		return nil, err
	}
	g := newGobwasConn(nc, br, true, hs.Extensions)
	g.pingc, g.pongs = make(chan string, 4), make(chan string, 4)
	g.onPing = func(p string) { g.pingc <- p }
	g.onPong = func(p string) { g.pongs <- p }
	return g, nil
}

func gobwasServe(t *testing.T, m mode, ev *events, cnt *counter) string {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ext := &wsflate.Extension{Parameters: wsflate.DefaultParameters}
		up := ws.HTTPUpgrader{Timeout: ioTimeout}
		if m != plain {
			up.Negotiate = ext.Negotiate
		}
		nc, rw, _, err := up.Upgrade(r, w)
		if err != nil {
			return
		}
		defer nc.Close()
		g := newGobwasConn(nc, nil, false, nil)
		if rw != nil && rw.Reader.Buffered() > 0 {
			g.r = io.MultiReader(rw.Reader, nc)
		}
		if _, ok := ext.Accepted(); ok {
			g.deflate = true
		}
		g.onPing = ev.ping
		g.onPong = func(p string) { ev.ping("pong:" + p) }
		closing := false
		for {
			bin, p, err := g.recv()
			if err != nil {
				var ce errGobwasClose
				if errors.As(err, &ce) {
					ev.closed(ce.ci.code, ce.ci.reason)
					if closing {
						if ce.ci.code != serverCode {
							err = fmt.Errorf("client answered %d", ce.ci.code)
						} else {
							err = nil
						}
						ev.handshakeDone(err)
					}
				}
				return
			}
			switch {
			case isCmdClose(bin, p):
				closing = true
				_ = g.writeFrame(ws.NewCloseFrame(ws.NewCloseFrameBody(serverCode, serverReason)))
				continue
			}
			if rest, ok := splitCmd(bin, p, cmdPing); ok {
				_ = g.writeFrame(ws.NewPingFrame(append([]byte(nil), rest...)))
				continue
			}
			if rest, ok := splitCmd(bin, p, cmdFrag); ok {
				if g.sendFragments(false, rest) != nil {
					return
				}
				continue
			}
			if g.send(bin, p) != nil {
				return
			}
		}
	}))
	srv.Listener = countListener{Listener: srv.Listener, c: cnt}
	srv.Start()
	t.Cleanup(srv.Close)
	return "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/ws"
}
