package websocket

// The frame codec of RFC 6455 section 5: headers, masking, close payloads.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"unicode/utf8"
)

// MessageType is the kind of a data message: TextMessage (UTF-8) or
// BinaryMessage.
type MessageType int

// The message types, numbered as their opcodes (RFC 6455 section 5.2).
const (
	TextMessage   MessageType = 1
	BinaryMessage MessageType = 2
)

// String returns "text" or "binary".
func (t MessageType) String() string {
	switch t {
	case TextMessage:
		return "text"
	case BinaryMessage:
		return "binary"
	}
	return fmt.Sprintf("MessageType(%d)", int(t))
}

// The opcodes of RFC 6455 section 5.2.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// isControl reports whether op is a control opcode (ping, pong, close and
// the reserved 0xB-0xF).
func isControl(op byte) bool { return op&0x8 != 0 }

// StatusCode is the status code of a close frame (RFC 6455 section 7.4).
type StatusCode int

// The status codes defined by RFC 6455 section 7.4.1 (and 1012-1014 from the
// IANA registry). StatusNoStatusRcvd and StatusAbnormalClosure are never
// sent: they stand for a close frame without a code and for a connection
// that ended without a close frame.
const (
	StatusNormalClosure      StatusCode = 1000
	StatusGoingAway          StatusCode = 1001
	StatusProtocolError      StatusCode = 1002
	StatusUnsupportedData    StatusCode = 1003
	StatusNoStatusRcvd       StatusCode = 1005
	StatusAbnormalClosure    StatusCode = 1006
	StatusInvalidPayloadData StatusCode = 1007
	StatusPolicyViolation    StatusCode = 1008
	StatusMessageTooBig      StatusCode = 1009
	StatusMandatoryExtension StatusCode = 1010
	StatusInternalError      StatusCode = 1011
	StatusServiceRestart     StatusCode = 1012
	StatusTryAgainLater      StatusCode = 1013
	StatusBadGateway         StatusCode = 1014
)

// validReceivedCode reports whether a peer may send code in a close frame:
// 1000-1003, 1007-1014 and 3000-4999 (RFC 6455 section 7.4, the IANA
// registry); 1004, 1005, 1006, 1015 and the rest are protocol errors.
func validReceivedCode(code StatusCode) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// Sentinel errors of the package; the errors returned wrap them.
var (
	// ErrClosed is the error of an operation on a connection after its
	// close handshake, after the user closed it, or after it failed. It
	// matches net.ErrClosed too (errors.Is), as a closed net.Conn's
	// errors do.
	ErrClosed error = closedError{}
	// ErrBadHandshake is wrapped by the errors of an opening handshake
	// that failed (Upgrade, Dial).
	ErrBadHandshake = errors.New("websocket: bad handshake")
	// ErrProtocol is wrapped by the error of a read that received a frame
	// breaking RFC 6455 (the connection was closed with 1002 or 1007).
	ErrProtocol = errors.New("websocket: protocol error")
	// ErrMessageTooBig is wrapped by the error of a read whose message
	// exceeds the read limit (the connection was closed with 1009).
	ErrMessageTooBig = errors.New("websocket: message too big")
	// ErrBadCloseCode is the error of Close given a code that may not be
	// sent (1005, 1006, 1015, or outside 1000-4999), or a reason longer
	// than 123 bytes.
	ErrBadCloseCode = errors.New("websocket: invalid close code or reason")
	// ErrBadURL is wrapped by the error of a Dial given a URL it cannot
	// dial: unparsable, without a host, or of a scheme other than ws and
	// wss.
	ErrBadURL = errors.New("websocket: bad URL")
	// ErrKeepAliveTimeout is wrapped by the error of a read whose
	// connection's keep-alive policy (Options.KeepAlive) sent a ping and
	// then heard nothing from the peer in time; the error wraps
	// os.ErrDeadlineExceeded too. The connection was closed.
	ErrKeepAliveTimeout = errors.New("websocket: keep-alive timeout")
)

// CloseError is the error of a read that received the peer's close frame:
// Code is the peer's status (StatusNoStatusRcvd when its frame had none)
// and Reason its reason. A connection that ended without a close frame
// reads an error wrapping io.EOF or the transport's error instead.
type CloseError struct {
	Code   StatusCode
	Reason string
	// err is the transport's error behind a StatusAbnormalClosure.
	err error
}

// Unwrap returns the transport's error of a connection that ended without
// a close frame (io.ErrUnexpectedEOF at the end of the stream), else nil.
func (e *CloseError) Unwrap() error { return e.err }

func (e *CloseError) Error() string {
	return fmt.Sprintf("websocket: closed by peer: %d %s", int(e.Code), e.Reason)
}

// CloseStatus returns the status code of err's CloseError, or -1 if err
// holds none.
func CloseStatus(err error) StatusCode {
	var ce *CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

// protocolError is a received frame that breaks the protocol: the read
// fails with it and the connection is closed with its code.
type protocolError struct {
	code StatusCode
	msg  string
}

func (e *protocolError) Error() string { return "websocket: " + e.msg }

func (e *protocolError) Unwrap() error {
	if e.code == StatusMessageTooBig {
		return ErrMessageTooBig
	}
	return ErrProtocol
}

func protoErr(code StatusCode, msg string) *protocolError {
	return &protocolError{code: code, msg: msg}
}

// The protocol errors a reader can meet, made once (a read that fails
// allocates nothing more).
var (
	errReservedBits   = protoErr(StatusProtocolError, "reserved bits set")
	errReservedOpcode = protoErr(StatusProtocolError, "reserved opcode")
	errControlFrag    = protoErr(StatusProtocolError, "fragmented control frame")
	errControlLen     = protoErr(StatusProtocolError, "control frame longer than 125 bytes")
	errUnmasked       = protoErr(StatusProtocolError, "unmasked frame from a client")
	errMasked         = protoErr(StatusProtocolError, "masked frame from a server")
	errContinuation   = protoErr(StatusProtocolError, "continuation frame without a message")
	errExpectedCont   = protoErr(StatusProtocolError, "new message before the last one ended")
	errLength         = protoErr(StatusProtocolError, "payload length with the top bit set or not minimal")
	errCloseLen       = protoErr(StatusProtocolError, "close frame with a 1-byte payload")
	errCloseCode      = protoErr(StatusProtocolError, "invalid close code")
	errCloseUTF8      = protoErr(StatusInvalidPayloadData, "close reason is not UTF-8")
	errTextUTF8       = protoErr(StatusInvalidPayloadData, "text message is not UTF-8")
	errTooBig         = protoErr(StatusMessageTooBig, "message exceeds the read limit")
)

// The reserved bits of the first header byte: RSV1 marks a compressed
// message (RFC 7692), RSV2 and RSV3 no extension here uses.
const (
	rsv1  = 0x40
	rsv23 = 0x30
)

// header is a parsed frame header.
type header struct {
	fin    bool
	rsv    byte // the RSV1-3 bits, in place (0x70)
	op     byte
	masked bool
	key    [4]byte
	length int64
}

// parseHeader parses the frame header at the start of b. It returns the
// header and its size, 0 if b holds only part of it, or an error for a
// header no peer may send: RSV2 or RSV3 (no extension uses them), a
// reserved opcode, a control frame that is fragmented or longer than 125
// bytes, a 64-bit length with its top bit set. Masking is checked by the
// caller, which knows its side. Non-minimal length encodings are accepted,
// as RFC 6455 does not forbid them to receivers.
func parseHeader(b []byte) (header, int, error) {
	var h header
	if len(b) < 2 {
		return h, 0, nil
	}
	h.fin = b[0]&0x80 != 0
	h.rsv = b[0] & 0x70
	h.op = b[0] & 0x0F
	h.masked = b[1]&0x80 != 0
	n := 2
	switch l := b[1] & 0x7F; l {
	case 126:
		if len(b) < 4 {
			return h, 0, nil
		}
		h.length = int64(binary.BigEndian.Uint16(b[2:]))
		n = 4
	case 127:
		if len(b) < 10 {
			return h, 0, nil
		}
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return h, 0, errLength
		}
		h.length = int64(u)
		n = 10
	default:
		h.length = int64(l)
	}
	if h.masked {
		if len(b) < n+4 {
			return h, 0, nil
		}
		copy(h.key[:], b[n:])
		n += 4
	}
	return h, n, checkHeader(h)
}

// checkHeader refuses a header no peer may send (see parseHeader). RSV1,
// the bit of permessage-deflate, is checked by the reader, which knows
// whether it was negotiated.
func checkHeader(h header) error {
	switch {
	case h.rsv&rsv23 != 0:
		return errReservedBits
	case h.op > opBinary && h.op < opClose, h.op > opPong:
		return errReservedOpcode
	case isControl(h.op) && !h.fin:
		return errControlFrag
	case isControl(h.op) && h.length > 125:
		return errControlLen
	}
	return nil
}

// appendHeader appends the header of a frame with opcode op, FIN fin and a
// payload of length bytes, masked with key when mask is set, using the
// shortest length encoding.
func appendHeader(b []byte, fin bool, op byte, length int, mask bool, key [4]byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	var m byte
	if mask {
		m = 0x80
	}
	switch {
	case length <= 125:
		b = append(b, b0, m|byte(length))
	case length <= 0xFFFF:
		b = append(b, b0, m|126)
		b = binary.BigEndian.AppendUint16(b, uint16(length))
	default:
		b = append(b, b0, m|127)
		b = binary.BigEndian.AppendUint64(b, uint64(length))
	}
	if mask {
		b = append(b, key[:]...)
	}
	return b
}

// maskBytes XORs b with key, starting at position pos of the key, and
// returns the position after b (RFC 6455 section 5.3). Masking twice
// unmasks.
func maskBytes(key [4]byte, pos int, b []byte) int {
	pos &= 3
	// Align to the key, then 8 bytes at a time.
	for len(b) > 0 && pos != 0 {
		b[0] ^= key[pos]
		b = b[1:]
		pos = (pos + 1) & 3
	}
	if len(b) >= 8 {
		k := uint64(binary.LittleEndian.Uint32(key[:]))
		k |= k << 32
		for len(b) >= 32 { // four words per round: a quarter of the loop's checks
			w := b[:32:32]
			binary.LittleEndian.PutUint64(w[0:], binary.LittleEndian.Uint64(w[0:])^k)
			binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(w[8:])^k)
			binary.LittleEndian.PutUint64(w[16:], binary.LittleEndian.Uint64(w[16:])^k)
			binary.LittleEndian.PutUint64(w[24:], binary.LittleEndian.Uint64(w[24:])^k)
			b = b[32:]
		}
		for len(b) >= 8 {
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k)
			b = b[8:]
		}
	}
	for i := range b {
		b[i] ^= key[(pos+i)&3]
	}
	return (pos + len(b)) & 3
}

// appendClosePayload appends the payload of a close frame with code and
// reason; a code of 0 makes an empty payload.
func appendClosePayload(b []byte, code StatusCode, reason string) []byte {
	if code == 0 {
		return b
	}
	b = binary.BigEndian.AppendUint16(b, uint16(code))
	return append(b, reason...)
}

// checkCloseArgs checks the code and reason of a Close: a code the peer
// may receive (or 0, for a close without a code, in which case reason must
// be empty) and a reason that fits a control frame and is UTF-8.
func checkCloseArgs(code StatusCode, reason string) error {
	switch {
	case code == 0 && reason == "":
		return nil
	case !validReceivedCode(code), len(reason) > 123, !utf8.ValidString(reason):
		return fmt.Errorf("%w: %d %q", ErrBadCloseCode, int(code), reason)
	}
	return nil
}

// parseClosePayload reads the code and reason of a received close frame.
func parseClosePayload(p []byte) (StatusCode, string, error) {
	switch {
	case len(p) == 0:
		return StatusNoStatusRcvd, "", nil
	case len(p) == 1:
		return 0, "", errCloseLen
	}
	code := StatusCode(binary.BigEndian.Uint16(p))
	if !validReceivedCode(code) {
		return 0, "", errCloseCode
	}
	if !utf8.Valid(p[2:]) {
		return 0, "", errCloseUTF8
	}
	return code, string(p[2:]), nil
}

// utf8State validates UTF-8 incrementally, across the fragments of a text
// message: it holds the bytes of a sequence cut by a fragment boundary.
type utf8State struct {
	pend [utf8.UTFMax]byte
	n    int
}

// feed validates b, which follows what was fed before. A sequence still
// incomplete at the end of b is kept for the next feed, unless it cannot
// be the start of a valid sequence (then feed fails at once, as Autobahn's
// "fail fast" cases expect).
func (u *utf8State) feed(b []byte) bool {
	for u.n > 0 && len(b) > 0 {
		u.pend[u.n] = b[0]
		u.n++
		b = b[1:]
		if utf8.FullRune(u.pend[:u.n]) {
			r, size := utf8.DecodeRune(u.pend[:u.n])
			if r == utf8.RuneError && size <= 1 {
				return false
			}
			u.n = 0
		} else if !validPrefix(u.pend[:u.n]) {
			return false
		}
	}
	if len(b) == 0 {
		return true
	}
	// Find where a trailing incomplete sequence starts.
	end := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				end = i
			}
			break
		}
	}
	if !utf8.Valid(b[:end]) {
		return false
	}
	u.n = copy(u.pend[:], b[end:])
	return u.n == 0 || validPrefix(u.pend[:u.n])
}

// done reports whether the message ended on a sequence boundary, and
// resets the state.
func (u *utf8State) done() bool {
	ok := u.n == 0
	u.n = 0
	return ok
}

// validPrefix reports whether p, an incomplete sequence, can still become
// a valid one (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF).
func validPrefix(p []byte) bool {
	b0 := p[0]
	var lo, hi byte = 0x80, 0xBF
	var need int
	switch {
	case b0 >= 0xC2 && b0 <= 0xDF:
		need = 2
	case b0 == 0xE0:
		need, lo = 3, 0xA0
	case b0 >= 0xE1 && b0 <= 0xEC, b0 == 0xEE, b0 == 0xEF:
		need = 3
	case b0 == 0xED:
		need, hi = 3, 0x9F
	case b0 == 0xF0:
		need, lo = 4, 0x90
	case b0 >= 0xF1 && b0 <= 0xF3:
		need = 4
	case b0 == 0xF4:
		need, hi = 4, 0x8F
	default:
		return false
	}
	if len(p) >= need {
		return false
	}
	for i, c := range p[1:] {
		if i == 0 {
			if c < lo || c > hi {
				return false
			}
		} else if c < 0x80 || c > 0xBF {
			return false
		}
	}
	return true
}

// closedError is ErrClosed: its own sentinel, which also matches
// net.ErrClosed.
type closedError struct{}

func (closedError) Error() string { return "websocket: connection closed" }

// Is reports whether target is net.ErrClosed (errors.Is compares with
// ErrClosed itself first).
func (closedError) Is(target error) bool { return target == net.ErrClosed }
