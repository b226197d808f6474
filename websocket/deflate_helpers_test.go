package websocket

// The raw client's permessage-deflate, written on compress/flate alone
// (not on the package's compressor), so that the tests check the package
// against an independent peer.

import (
	"bytes"
	"compress/flate"
	"io"
	"net/http"
	"strings"
	"testing"
)

// zpeer is the raw client's side of a negotiated permessage-deflate.
type zpeer struct {
	// sendTakeover: the client keeps its compression context (the
	// response has no client_no_context_takeover).
	sendTakeover bool
	// recvTakeover: the server keeps its context; dict is its history.
	recvTakeover bool
	// huffman compresses without back-references, for a
	// client_max_window_bits under 15.
	huffman bool
	fw      *flate.Writer
	out     bytes.Buffer
	dict    []byte
}

// newZpeer reads the server's response; nil if it declined.
func newZpeer(resp *http.Response) *zpeer {
	ext := resp.Header.Get("Sec-WebSocket-Extensions")
	if ext == "" {
		return nil
	}
	return &zpeer{
		sendTakeover: !strings.Contains(ext, "client_no_context_takeover"),
		recvTakeover: !strings.Contains(ext, "server_no_context_takeover"),
		huffman:      strings.Contains(ext, "client_max_window_bits=") && !strings.Contains(ext, "client_max_window_bits=15"),
	}
}

// compress deflates p as one message: flushed, tail removed.
func (z *zpeer) compress(p []byte) []byte {
	if z.fw == nil || !z.sendTakeover {
		level := flate.BestSpeed
		if z.huffman {
			level = flate.HuffmanOnly
		}
		z.out.Reset()
		z.fw, _ = flate.NewWriter(&z.out, level)
	}
	z.out.Reset()
	_, _ = z.fw.Write(p)
	_ = z.fw.Flush()
	b := bytes.Clone(z.out.Bytes())
	if !bytes.HasSuffix(b, []byte(deflateTail)) {
		panic("flush without its tail")
	}
	return b[:len(b)-4]
}

// inflate decompresses a message from the server.
func (z *zpeer) inflate(p []byte) ([]byte, error) {
	var dict []byte
	if z.recvTakeover {
		dict = z.dict
	}
	in := io.MultiReader(bytes.NewReader(p), strings.NewReader(deflateTail+"\x01\x00\x00\xff\xff"))
	out, err := io.ReadAll(flate.NewReaderDict(in, dict))
	if err != nil {
		return nil, err
	}
	if z.recvTakeover {
		z.dict = append(z.dict, out...)
		if len(z.dict) > 32<<10 {
			z.dict = z.dict[len(z.dict)-32<<10:]
		}
	}
	return out, nil
}

// zframes splits a compressed (or plain, when rsv is false) message of
// opcode op into client frames of at most frag bytes (0: one frame),
// RSV1 on the first.
func zframes(op byte, p []byte, rsv bool, frag int) [][]byte {
	if frag <= 0 || frag >= len(p) {
		frag = max(len(p), 1)
	}
	var out [][]byte
	for first := true; first || len(p) > 0; first = false {
		n := min(frag, len(p))
		b0 := byte(opContinuation)
		if first {
			b0 = op
			if rsv {
				b0 |= rsv1
			}
		}
		if n == len(p) {
			b0 |= 0x80
		}
		out = append(out, frame(b0, p[:n]))
		p = p[n:]
	}
	return out
}

// sendMessage sends p as a message in frames of frag bytes, compressed
// when z is set.
func (rc *rawConn) sendMessage(z *zpeer, op byte, p []byte, frag int) {
	rc.t.Helper()
	if z != nil {
		p = z.compress(p)
	}
	rc.send(bytes.Join(zframes(op, p, z != nil, frag), nil))
}

// readMessage reads the server's next data message, gathering its
// fragments and inflating it when RSV1 is set; control frames are
// returned as they come.
func (rc *rawConn) readMessage(z *zpeer) (rxFrame, bool) {
	rc.t.Helper()
	f, ok := rc.next()
	if !ok || isControl(f.op) {
		return f, ok
	}
	msg := f
	for !f.fin {
		if f, ok = rc.next(); !ok {
			return f, false
		}
		if f.op != opContinuation || f.rsv1 {
			rc.t.Fatalf("server sent %#x rsv1=%v inside a message", f.op, f.rsv1)
		}
		msg.payload += f.payload
	}
	msg.fin = true
	if msg.rsv1 {
		if z == nil {
			rc.t.Fatalf("server sent RSV1 without the extension")
		}
		out, err := z.inflate([]byte(msg.payload))
		if err != nil {
			rc.t.Fatalf("inflating the server's message: %v", err)
		}
		msg.payload = string(out)
	}
	return msg, true
}

// openZ performs the handshake offering ext (none if empty) and returns
// the connection and the raw client's deflate (nil if declined).
func openZ(t testing.TB, ts *testServer, ext string) (*rawConn, *zpeer, *http.Response) {
	t.Helper()
	h := goodHeaders
	if ext != "" {
		h += "Sec-WebSocket-Extensions: " + ext + "\r\n"
	}
	rc, resp := dialRaw(t, ts, h)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return rc, newZpeer(resp), resp
}

// closeRaw runs the closing handshake from the raw client.
func (rc *rawConn) closeRaw() {
	rc.t.Helper()
	rc.send(closeFrame(1000, ""))
	got, ok := rc.next()
	if !ok || got.op != opClose || closeCodeOf(got) != 1000 {
		rc.t.Fatalf("closing handshake: got %#x %q (stream open: %v)", got.op, got.payload, ok)
	}
	rc.expectEnd()
}

// expectFail reads the server's close with code, answers it, and waits
// for the end of the stream.
func (rc *rawConn) expectFail(code int) {
	rc.t.Helper()
	got, ok := rc.next()
	for ok && got.op != opClose {
		got, ok = rc.next()
	}
	if !ok || closeCodeOf(got) != code {
		rc.t.Fatalf("want a close %d, got %#x %q (stream open: %v)", code, got.op, got.payload, ok)
	}
	rc.send(closeFrame(code, ""))
	rc.expectEnd()
}

// testDeflater is a connection's permessage-deflate without the
// connection: the shared deflater, the connection's context, and the
// inflated message's buffer.
type testDeflater struct {
	*deflater
	*deflateCtx
	out []byte
}

func newTestDeflater(p deflateParams, o *CompressionOptions, client bool) *testDeflater {
	return &testDeflater{deflater: newDeflater(p, o, client), deflateCtx: &deflateCtx{}}
}

// compress returns p compressed as one message (a buffer of its own).
func (d *testDeflater) compress(p []byte) []byte {
	return d.deflater.compress(d.deflateCtx, nil, p)
}

// inflate inflates a message into the deflater's buffer.
func (d *testDeflater) inflate(in []byte, limit int64) ([]byte, error) {
	out, err := d.deflater.inflate(d.deflateCtx, d.out, in, limit)
	d.out = out
	if err != nil {
		return nil, err
	}
	return out, nil
}
