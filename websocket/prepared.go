package websocket

// Prepared messages: a message encoded, and compressed, once for the many
// connections it is written to (see "Broadcast" in the package doc).

import (
	"fmt"
	"sync"
)

// PreparedMessage is a data message encoded once for many connections:
// Conn.WritePreparedMessage and Conn.WritePrepared send it, and a
// Broadcaster sends it to a set of connections. Its frames are made on
// the first write that needs them, once for each distinct encoding the
// connections call for, and kept with the message:
//
//   - uncompressed, server side: the frames (headers and payload) are
//     encoded once and every server connection writes those very bytes,
//     without a copy of its own;
//   - compressed without context takeover on our side (our side's
//     compressor starts each message afresh: the default, or
//     server_no_context_takeover negotiated): the payload is compressed
//     once per flate level, and the frames encoded once, for every
//     connection that negotiated permessage-deflate at that level and
//     whose threshold the message reaches;
//   - compressed with context takeover on our side: each connection's
//     compressor holds the history of what it sent, so that a payload
//     compressed elsewhere would corrupt the peer's view of it; the
//     message is compressed by each connection with its own compressor,
//     as WriteMessage does (its CPU is then paid per connection, and the
//     frames are the connection's own);
//   - client side: a client masks every frame with a fresh key, so each
//     connection copies and masks the (shared, possibly compressed)
//     payload.
//
// A PreparedMessage may be written to any number of connections at once,
// from any goroutine or task. Its memory is the message's data, plus one
// encoding (about the size of the data, or of its compressed form) for
// each distinct encoding used; it is released with the message.
type PreparedMessage struct {
	typ  MessageType
	data []byte
	frag int

	// mu guards encs; held while an encoding is made (the first
	// connection to need it compresses, the others wait for it).
	mu   sync.Mutex
	encs []*preparedEncoding
}

// PrepareOptions tune NewPreparedMessage; the zero PrepareOptions is
// valid.
type PrepareOptions struct {
	// FragmentSize, if positive, splits the message into frames whose
	// payloads hold at most FragmentSize bytes (of the compressed payload,
	// for a compressed message); 0 sends each message as one frame.
	FragmentSize int
}

// preparedEncoding is one encoding of a prepared message.
type preparedEncoding struct {
	// level is the flate level of a compressed payload, noCompression if
	// none; client says the frames are a client's (masked per
	// connection, so only the payload is kept).
	level  int
	client bool
	// payload is the message's payload as sent: its data, or compressed.
	payload []byte
	// wire is a server's frames, whole: headers and payload.
	wire []byte
}

// noCompression is the level of an uncompressed encoding.
const noCompression = -100

// NewPreparedMessage returns data, as a message of type typ, prepared for
// writing to many connections. data belongs to the message: it must not
// be modified afterwards. An invalid typ fails with an error wrapping
// ErrBadOptions.
func NewPreparedMessage(typ MessageType, data []byte, opts *PrepareOptions) (*PreparedMessage, error) {
	if typ != TextMessage && typ != BinaryMessage {
		return nil, fmt.Errorf("%w: message type %d", ErrBadOptions, int(typ))
	}
	pm := &PreparedMessage{typ: typ, data: data}
	if opts != nil && opts.FragmentSize > 0 {
		pm.frag = opts.FragmentSize
	}
	return pm, nil
}

// Type returns the message's type.
func (pm *PreparedMessage) Type() MessageType { return pm.typ }

// Data returns the message's payload (not to be modified).
func (pm *PreparedMessage) Data() []byte { return pm.data }

// encoding returns the encoding at level (noCompression for none) for a
// client or a server, made on the first call.
func (pm *PreparedMessage) encoding(level int, client bool) *preparedEncoding {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	for _, e := range pm.encs {
		if e.level == level && e.client == client {
			return e
		}
	}
	e := &preparedEncoding{level: level, client: client, payload: pm.data}
	if level != noCompression {
		d := deflater{level: level}
		e.payload = d.compress(nil, make([]byte, 0, len(pm.data)/2+64), pm.data)
	}
	if !client {
		e.wire = appendFrames(make([]byte, 0, framesSize(len(e.payload), pm.frag)), byte(pm.typ), e.payload, pm.frag, level != noCompression, false)
		e.payload = nil // in wire
	}
	pm.encs = append(pm.encs, e)
	return e
}

// buildPrepared lays out the frames of a prepared message for the
// connection: the message's own bytes on a server, a masked copy on a
// client, the connection's own compression with context takeover.
// Called by the write lock's holder.
func (w *frameWrite) buildPrepared() {
	c, pm := w.c, w.prep
	zip := c.dfl() != nil && c.dfl().useCompression(len(pm.data))
	var payload []byte
	switch {
	case zip && c.dfl().wTakeover:
		w.zb = getWriteBuf(len(pm.data)/2 + 64)
		payload = c.dfl().compress(c.dctx(), *w.zb, pm.data)
		w.payload = payload // given back with zb
	case zip:
		e := pm.encoding(c.dfl().level, c.cfg.client)
		if !c.cfg.client {
			w.head = e.wire
			return
		}
		payload = e.payload
	default:
		if !c.cfg.client {
			w.head = pm.encoding(noCompression, false).wire
			return
		}
		payload = pm.data
	}
	w.hb = getWriteBuf(framesSize(len(payload), pm.frag))
	w.head = appendFrames(*w.hb, byte(pm.typ), payload, pm.frag, zip, c.cfg.client)
}

// framesSize is the most bytes that appendFrames appends for a payload
// of n bytes in fragments of frag (0: one frame).
func framesSize(n, frag int) int {
	k := 1
	if frag > 0 && n > frag {
		k = (n + frag - 1) / frag
	}
	return n + k*maxHeader
}

// appendFrames appends the frames of a message of opcode op to b: one
// frame, or fragments of frag bytes of payload, RSV1 on the first if
// rsv1, each masked with a fresh key if mask.
func appendFrames(b []byte, op byte, payload []byte, frag int, rsv1, mask bool) []byte {
	if frag <= 0 || len(payload) <= frag {
		return appendFrame(b, true, op, rsv1, payload, true, mask)
	}
	for {
		n := min(frag, len(payload))
		fin := n == len(payload)
		b = appendFrame(b, fin, op, rsv1, payload[:n], true, mask)
		if fin {
			return b
		}
		payload = payload[n:]
		op, rsv1 = opContinuation, false
	}
}
