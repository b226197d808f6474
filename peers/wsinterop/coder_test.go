package wsinterop

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
)

// coder/websocket: permessage-deflate with or without context takeover;
// Writer sends a frame per Write. Its Ping sends a payload of its own
// (a counter) and returns once the pong with that payload is read, so the
// pong's payload is checked by coder, not by the test.

func init() {
	peers = append(peers, peer{name: "coder/websocket", deflate: true, dial: coderDial, serve: coderServe})
}

func coderMode(m mode) coder.CompressionMode {
	switch m {
	case deflate:
		return coder.CompressionNoContextTakeover
	case takeover:
		return coder.CompressionContextTakeover
	}
	return coder.CompressionDisabled
}

type coderClient struct {
	c     *coder.Conn
	ctx   context.Context
	ext   string
	pingc chan string
}

func coderDial(t *testing.T, url string, m mode, cnt *counter) (peerClient, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cl := &coderClient{ctx: ctx, pingc: make(chan string, 4)}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countConn{Conn: c, c: cnt}, nil
	}}
	t.Cleanup(tr.CloseIdleConnections)
	c, resp, err := coder.Dial(ctx, url, &coder.DialOptions{
		HTTPClient:      &http.Client{Transport: tr},
		CompressionMode: coderMode(m),
		OnPingReceived: func(_ context.Context, p []byte) bool {
			cl.pingc <- string(p)
			return true
		},
	})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 30)
	cl.c, cl.ext = c, resp.Header.Get("Sec-WebSocket-Extensions")
	return cl, nil
}

func coderType(binary bool) coder.MessageType {
	if binary {
		return coder.MessageBinary
	}
	return coder.MessageText
}

func (c *coderClient) send(binary bool, p []byte) error {
	return c.c.Write(c.ctx, coderType(binary), p)
}

func (c *coderClient) sendFragments(binary bool, p []byte) error {
	w, err := c.c.Writer(c.ctx, coderType(binary))
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

func (c *coderClient) recv() (bool, []byte, error) {
	typ, p, err := c.c.Read(c.ctx)
	return typ == coder.MessageBinary, p, err
}

func (c *coderClient) ping([]byte) error {
	// Ping needs a reader for the pong: read the echo of a message
	// meanwhile.
	done := make(chan error, 1)
	go func() {
		_, _, err := c.recv()
		done <- err
	}()
	err := c.c.Ping(c.ctx)
	if err2 := c.send(false, []byte("after ping")); err == nil {
		err = err2
	}
	if err2 := <-done; err == nil {
		err = err2
	}
	return err
}

func (c *coderClient) pings() <-chan string { return c.pingc }

func (c *coderClient) closeHandshake(code int, reason string) (closeInfo, error) {
	// Close returns nil when the peer answered with the same code.
	if err := c.c.Close(coder.StatusCode(code), reason); err != nil {
		return closeInfo{}, err
	}
	return closeInfo{code: code}, nil
}

func (c *coderClient) recvClose() (closeInfo, error) {
	for {
		_, _, err := c.c.Read(c.ctx)
		if err == nil {
			continue
		}
		var ce coder.CloseError
		if errors.As(err, &ce) {
			return closeInfo{int(ce.Code), ce.Reason}, nil
		}
		return closeInfo{}, err
	}
}

func (c *coderClient) extensions() string { return c.ext }
func (c *coderClient) abort()             { _ = c.c.CloseNow() }

func coderServe(t *testing.T, m mode, ev *events, cnt *counter) string {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := coder.Accept(w, r, &coder.AcceptOptions{
			InsecureSkipVerify: true,
			CompressionMode:    coderMode(m),
			OnPingReceived: func(_ context.Context, p []byte) bool {
				ev.ping(string(p))
				return true
			},
		})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 30)
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		for {
			typ, p, err := c.Read(ctx)
			if err != nil {
				var ce coder.CloseError
				if errors.As(err, &ce) {
					ev.closed(int(ce.Code), ce.Reason)
				}
				return
			}
			bin := typ == coder.MessageBinary
			if isCmdClose(bin, p) {
				// Close reads the client's answer itself; nil when it
				// carries the same code.
				ev.handshakeDone(c.Close(serverCode, serverReason))
				return
			}
			if _, ok := splitCmd(bin, p, cmdPing); ok {
				// coder pings with its own payload and needs a reader for
				// the pong: the loop reads on.
				go func() {
					if err := c.Ping(ctx); err == nil {
						ev.ping("pong:server-ping")
					}
				}()
				continue
			}
			if rest, ok := splitCmd(bin, p, cmdFrag); ok {
				w, err := c.Writer(ctx, coder.MessageText)
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
			if err := c.Write(ctx, typ, p); err != nil {
				return
			}
		}
	}))
	srv.Listener = countListener{Listener: srv.Listener, c: cnt}
	srv.Start()
	t.Cleanup(srv.Close)
	return "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/ws"
}
