//go:build linux

package peers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// WSPayload is the size of a WS round trip's message.
const WSPayload = 1024

// wsRequest is the load's opening handshake (the key of RFC 6455's
// example: the servers check its form, not its freshness).
const wsRequest = "GET /ws HTTP/1.1\r\nHost: peers\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
	"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"

// wsKey is the mask of the load's frames: one key for every frame, which
// servers cannot tell from fresh ones (a client's keys must be
// unpredictable to an attacker, not to a server).
var wsKey = [4]byte{0x37, 0xfa, 0x21, 0x3d}

// wsOut is the load's message, wsFrame its frame: binary, masked.
var wsOut, wsFrame = func() ([]byte, []byte) {
	p := bytes.Repeat([]byte{'x'}, WSPayload)
	f := []byte{0x82, 0x80 | 126, byte(WSPayload >> 8), byte(WSPayload & 0xff)}
	f = append(f, wsKey[:]...)
	for i, b := range p {
		f = append(f, b^wsKey[i&3])
	}
	return p, f
}()

// wsHandshake performs the opening handshake.
func (c *Client) wsHandshake() error {
	if _, err := io.WriteString(c.c, wsRequest); err != nil {
		return err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("peers: WebSocket handshake answered %d", resp.StatusCode)
	}
	return nil
}

// wsRoundTrip sends the load's message and reads its echo.
func (c *Client) wsRoundTrip() error {
	if _, err := c.c.Write(wsFrame); err != nil {
		return err
	}
	p, err := c.ReadMessage()
	if err != nil {
		return err
	}
	if !bytes.Equal(p, wsOut) {
		return errors.New("peers: echo answered another message")
	}
	return nil
}

// errWSClosed is the error of a read that met the server's close frame.
var errWSClosed = errors.New("peers: the WebSocket server closed")

// ReadMessage reads the next data message of a WS client (its fragments
// gathered; pings and pongs skipped), valid until the next read.
func (c *Client) ReadMessage() ([]byte, error) {
	msg := c.buf[:0]
	var h [8]byte
	for {
		if _, err := io.ReadFull(c.r, h[:2]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		if h[1]&0x80 != 0 {
			return nil, errors.New("peers: the server masked a frame")
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(c.r, h[:2]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(h[:2]))
		case 127:
			if _, err := io.ReadFull(c.r, h[:8]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(h[:8])
		}
		if n > 1<<24 {
			return nil, fmt.Errorf("peers: a frame of %d bytes", n)
		}
		start := len(msg)
		msg = append(msg, make([]byte, n)...)
		if _, err := io.ReadFull(c.r, msg[start:]); err != nil {
			return nil, err
		}
		switch {
		case op == 0x8:
			return nil, errWSClosed
		case op >= 0x8: // ping, pong
			msg = msg[:start]
			continue
		}
		if fin {
			c.buf = msg[:0]
			return msg, nil
		}
	}
}
