package websocket

// The negotiation of permessage-deflate (RFC 7692 sections 5 and 7.1):
// parsing Sec-WebSocket-Extensions (RFC 6455 section 9.1), the server's
// choice among the client's offers, the client's offer and its check of
// the server's response.

import (
	"compress/flate"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// extension is one element of a Sec-WebSocket-Extensions list: a name
// and its parameters, in order (a parameter without a value has
// hasValue false).
type extension struct {
	name   string
	params []extParam
}

type extParam struct {
	name, value string
	hasValue    bool
}

// errExtSyntax is wrapped by the errors of a header that is not an
// extension list.
var errExtSyntax = errors.New("malformed Sec-WebSocket-Extensions")

// parseExtensions parses the lines of a Sec-WebSocket-Extensions field:
//
//	extension-list = 1#extension
//	extension      = token *( ";" param )
//	param          = token [ "=" ( token / quoted-string ) ]
//
// Empty list elements are skipped (RFC 9110 section 5.6.1); a quoted
// value must unquote to a token (RFC 6455 section 9.1).
func parseExtensions(lines []string) ([]extension, error) {
	var out []extension
	for _, line := range lines {
		p := extParser{s: line}
		for {
			p.skipSpace()
			if p.done() {
				break
			}
			if p.peek() == ',' {
				p.i++
				continue
			}
			e, err := p.extension()
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %w", errExtSyntax, line, err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// extParser reads one header line.
type extParser struct {
	s string
	i int
}

func (p *extParser) done() bool { return p.i >= len(p.s) }
func (p *extParser) peek() byte { return p.s[p.i] }

func (p *extParser) skipSpace() {
	for !p.done() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

// extension reads a name and its parameters, up to a ',' or the end.
func (p *extParser) extension() (extension, error) {
	var e extension
	name, err := p.token()
	if err != nil {
		return e, err
	}
	e.name = name
	for {
		p.skipSpace()
		if p.done() || p.peek() == ',' {
			return e, nil
		}
		if p.peek() != ';' {
			return e, fmt.Errorf("unexpected %q at %d", p.peek(), p.i)
		}
		p.i++
		p.skipSpace()
		prm, err := p.param()
		if err != nil {
			return e, err
		}
		e.params = append(e.params, prm)
	}
}

// param reads name [= value].
func (p *extParser) param() (extParam, error) {
	var prm extParam
	name, err := p.token()
	if err != nil {
		return prm, err
	}
	prm.name = name
	p.skipSpace()
	if p.done() || p.peek() != '=' {
		return prm, nil
	}
	p.i++
	p.skipSpace()
	prm.hasValue = true
	if !p.done() && p.peek() == '"' {
		prm.value, err = p.quoted()
	} else {
		prm.value, err = p.token()
	}
	return prm, err
}

// token reads a token (RFC 9110 tchar+).
func (p *extParser) token() (string, error) {
	start := p.i
	for !p.done() && isTokenChar(p.peek()) {
		p.i++
	}
	if p.i == start {
		if p.done() {
			return "", errors.New("missing token at the end")
		}
		return "", fmt.Errorf("expected a token at %d, got %q", p.i, p.peek())
	}
	return p.s[start:p.i], nil
}

// quoted reads a quoted-string, whose content must be a token.
func (p *extParser) quoted() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.done() {
		c := p.peek()
		p.i++
		switch {
		case c == '"':
			v := b.String()
			if v == "" || strings.IndexFunc(v, func(r rune) bool { return r > 0x7f || !isTokenChar(byte(r)) }) >= 0 {
				return "", fmt.Errorf("quoted value %q is not a token", v)
			}
			return v, nil
		case c == '\\':
			if p.done() {
				return "", errors.New("unterminated quoted-string")
			}
			b.WriteByte(p.peek())
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unterminated quoted-string")
}

// isTokenChar reports whether c is a tchar of RFC 9110 section 5.6.2.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// deflateParams are the parameters of a permessage-deflate offer or
// response. A window of 0 means the parameter is absent; clientMaxBitsOn
// marks client_max_window_bits without a value (an offer's "the server
// may choose"), clientMaxWindowBits then 0.
type deflateParams struct {
	serverNoContextTakeover bool
	clientNoContextTakeover bool
	serverMaxWindowBits     int
	clientMaxWindowBits     int
	clientMaxBitsOn         bool
}

const extDeflate = "permessage-deflate"

// extensions holds the String of the parameters seen, shared by the
// connections that agreed on them (a few distinct values in practice).
var extensions sync.Map

// extension returns p.String(), one string for all the connections.
func (p deflateParams) extension() string {
	if s, ok := extensions.Load(p); ok {
		return s.(string)
	}
	s, _ := extensions.LoadOrStore(p, p.String())
	return s.(string)
}

// String formats p as a Sec-WebSocket-Extensions element.
func (p deflateParams) String() string {
	s := extDeflate
	if p.serverNoContextTakeover {
		s += "; server_no_context_takeover"
	}
	if p.clientNoContextTakeover {
		s += "; client_no_context_takeover"
	}
	if p.serverMaxWindowBits != 0 {
		s += "; server_max_window_bits=" + strconv.Itoa(p.serverMaxWindowBits)
	}
	if p.clientMaxWindowBits != 0 {
		s += "; client_max_window_bits=" + strconv.Itoa(p.clientMaxWindowBits)
	} else if p.clientMaxBitsOn {
		s += "; client_max_window_bits"
	}
	return s
}

// errDeflateParams is wrapped by the errors of a permessage-deflate
// element whose parameters RFC 7692 forbids.
var errDeflateParams = errors.New("invalid permessage-deflate parameters")

// parseDeflateParams validates the parameters of a permessage-deflate
// element (RFC 7692 section 7.1): known names only, each at most once,
// the *_no_context_takeover without a value, server_max_window_bits with
// one, client_max_window_bits with one in a response (response) and
// optionally in an offer; values are 8 to 15 without leading zeros.
func parseDeflateParams(e extension, response bool) (deflateParams, error) {
	var p deflateParams
	seen := map[string]bool{}
	for _, prm := range e.params {
		name := strings.ToLower(prm.name)
		if seen[name] {
			return p, fmt.Errorf("%w: duplicate %s", errDeflateParams, prm.name)
		}
		seen[name] = true
		var err error
		switch name {
		case "server_no_context_takeover":
			p.serverNoContextTakeover, err = true, noValue(prm)
		case "client_no_context_takeover":
			p.clientNoContextTakeover, err = true, noValue(prm)
		case "server_max_window_bits":
			p.serverMaxWindowBits, err = windowBits(prm)
		case "client_max_window_bits":
			if !prm.hasValue && !response {
				p.clientMaxBitsOn = true
				continue
			}
			p.clientMaxWindowBits, err = windowBits(prm)
			p.clientMaxBitsOn = true
		default:
			err = fmt.Errorf("%w: unknown parameter %s", errDeflateParams, prm.name)
		}
		if err != nil {
			return deflateParams{}, err
		}
	}
	return p, nil
}

func noValue(prm extParam) error {
	if prm.hasValue {
		return fmt.Errorf("%w: %s takes no value", errDeflateParams, prm.name)
	}
	return nil
}

// windowBits reads the value of a *_max_window_bits parameter.
func windowBits(prm extParam) (int, error) {
	v := prm.value
	if !prm.hasValue || len(v) == 0 || len(v) > 2 || v[0] == '0' || strings.Trim(v, "0123456789") != "" {
		return 0, fmt.Errorf("%w: %s=%q (want 8-15)", errDeflateParams, prm.name, v)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 8 || n > 15 {
		return 0, fmt.Errorf("%w: %s=%q (want 8-15)", errDeflateParams, prm.name, v)
	}
	return n, nil
}

// serverAccept chooses the first of the client's permessage-deflate
// offers in lines, the values of its Sec-WebSocket-Extensions fields, that
// o can honour and returns the response's
// parameters; ok is false when none can be (the server then answers
// without the extension). Offers with invalid parameters, and offers
// asking for a server window under 32 KiB (server_max_window_bits < 15),
// which flate cannot honour unless o.Level is flate.HuffmanOnly, are
// declined; a malformed header declines every offer.
func serverAccept(lines []string, o *CompressionOptions) (resp deflateParams, ok bool) {
	exts, err := parseExtensions(lines)
	if err != nil {
		return resp, false
	}
	for _, e := range exts {
		if !strings.EqualFold(e.name, extDeflate) {
			continue
		}
		offer, err := parseDeflateParams(e, false)
		if err != nil {
			continue
		}
		if r, ok := respondTo(offer, o); ok {
			return r, true
		}
	}
	return resp, false
}

// respondTo answers one valid offer, if o can honour it.
func respondTo(offer deflateParams, o *CompressionOptions) (deflateParams, bool) {
	var r deflateParams
	if b := offer.serverMaxWindowBits; b != 0 {
		if b < 15 && o.level() != flate.HuffmanOnly {
			return r, false // flate's window is always 32 KiB
		}
		r.serverMaxWindowBits = b
	}
	r.serverNoContextTakeover = offer.serverNoContextTakeover || !o.ContextTakeover
	r.clientNoContextTakeover = offer.clientNoContextTakeover || !o.PeerContextTakeover
	if offer.clientMaxBitsOn && o.PeerMaxWindowBits != 0 {
		r.clientMaxWindowBits = o.PeerMaxWindowBits
		if offer.clientMaxWindowBits != 0 {
			r.clientMaxWindowBits = min(r.clientMaxWindowBits, offer.clientMaxWindowBits)
		}
	}
	return r, true
}

// clientOffer returns the client's offer for o. It never offers
// client_max_window_bits: the server could then ask for a window that
// flate cannot keep to.
func clientOffer(o *CompressionOptions) deflateParams {
	return deflateParams{
		clientNoContextTakeover: !o.ContextTakeover,
		serverNoContextTakeover: !o.PeerContextTakeover,
		serverMaxWindowBits:     o.PeerMaxWindowBits,
	}
}

// clientCheck validates the server's Sec-WebSocket-Extensions against the
// offer: nothing, or one permessage-deflate element with valid
// parameters that keep to the offer (RFC 7692 section 7.1). It returns
// the parameters in force, and on, false when the server declined. A
// response without the server_no_context_takeover that the offer asked
// for is accepted (the server keeps its context: the connection keeps
// the history to inflate its messages).
func clientCheck(h http.Header, offer deflateParams) (p deflateParams, on bool, err error) {
	exts, err := parseExtensions(h[hdrExtensions])
	if err != nil {
		return p, false, fmt.Errorf("%w: %w", ErrBadHandshake, err)
	}
	switch {
	case len(exts) == 0:
		return p, false, nil
	case len(exts) > 1:
		return p, false, fmt.Errorf("%w: %d extensions in the response", ErrBadHandshake, len(exts))
	case !strings.EqualFold(exts[0].name, extDeflate):
		return p, false, fmt.Errorf("%w: extension %q not offered", ErrBadHandshake, exts[0].name)
	}
	p, err = parseDeflateParams(exts[0], true)
	if err != nil {
		return p, false, fmt.Errorf("%w: %w", ErrBadHandshake, err)
	}
	switch {
	case p.clientMaxBitsOn:
		return p, false, fmt.Errorf("%w: client_max_window_bits not offered", ErrBadHandshake)
	case offer.serverMaxWindowBits != 0 && (p.serverMaxWindowBits == 0 || p.serverMaxWindowBits > offer.serverMaxWindowBits):
		return p, false, fmt.Errorf("%w: server_max_window_bits=%d does not keep to the offer's %d", ErrBadHandshake, p.serverMaxWindowBits, offer.serverMaxWindowBits)
	}
	return p, true, nil
}
