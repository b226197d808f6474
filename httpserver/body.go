package httpserver

// The body decoder: it turns the bytes of a request body as they arrive
// (Content-Length or chunked) into the bytes the handler reads. It is a
// pure function of its state and its input, run by the connection task.

import (
	"errors"
	"fmt"
	"math"
	"net/http"
)

// Errors of a malformed chunked body; the connection is closed after one.
var (
	errChunkLine    = errors.New("httpserver: malformed chunked encoding")
	errChunkTooLong = errors.New("httpserver: chunk size line too long")
	errTrailer      = errors.New("httpserver: trailer section too large or malformed")
)

// maxChunkLine bounds a chunk-size line with its extensions, and
// maxTrailerBytes the trailer section of a chunked body.
const (
	maxChunkLine    = 4096
	maxTrailerBytes = 16 << 10
)

// chunkPhase is where a chunked decoder is.
type chunkPhase uint8

const (
	chunkSize     chunkPhase = iota // reading a chunk-size line
	chunkData                       // inside a chunk's data
	chunkDataCR                     // expecting the CR after a chunk's data
	chunkDataLF                     // expecting the LF after a chunk's data
	chunkTrailer                    // reading trailer lines
	chunkFinished                   // the body ended
)

// bodyDecoder is the state of one request body. Owned by the connection
// task.
type bodyDecoder struct {
	kind bodyKind
	// remaining is what is left of a Content-Length body, or of the
	// current chunk.
	remaining int64
	phase     chunkPhase
	// line gathers a chunk-size or trailer line that spans reads.
	line []byte
	// trailerBytes counts the trailer section so far.
	trailerBytes int
	// trailer holds the trailer fields read so far (nil until the first):
	// the connection task moves them to Request.Trailer when the body
	// ends.
	trailer http.Header
	// done is set once the body ended (the handler reads io.EOF next).
	done bool
}

func (d *bodyDecoder) reset(kind bodyKind, length int64) {
	*d = bodyDecoder{kind: kind, remaining: length, done: kind == bodyNone || (kind == bodyLength && length == 0)}
}

// decode decodes from in into out: it returns how many bytes of in it
// consumed and how many of out it filled. It stops when out is full, in is
// used up, or the body ended (d.done). A malformed body is an error, after
// which the decoder must not be used. out may be nil, to discard (drain):
// then up to len(in) bytes are consumed.
func (d *bodyDecoder) decode(in, out []byte) (consumed, produced int, err error) {
	discard := out == nil
	for !d.done && len(in) > consumed && (discard || produced < len(out)) {
		switch d.kind {
		case bodyLength:
			n := int64(len(in) - consumed)
			if !discard {
				n = min(n, int64(len(out)-produced))
			}
			n = min(n, d.remaining)
			if !discard {
				copy(out[produced:], in[consumed:consumed+int(n)])
				produced += int(n)
			}
			consumed += int(n)
			d.remaining -= n
			if d.remaining == 0 {
				d.done = true
			}
		case bodyChunked:
			c, p, err := d.decodeChunked(in[consumed:], out, produced, discard)
			consumed += c
			produced = p
			if err != nil {
				return consumed, produced, err
			}
		default:
			d.done = true
		}
	}
	return consumed, produced, nil
}

// decodeChunked advances a chunked body by one step of its grammar
// (RFC 9112 section 7.1): it returns what it consumed of in and the new
// fill of out.
func (d *bodyDecoder) decodeChunked(in, out []byte, produced int, discard bool) (int, int, error) {
	switch d.phase {
	case chunkSize, chunkTrailer:
		line, n, ok, err := d.takeLine(in)
		if err != nil || !ok {
			return n, produced, err
		}
		if d.phase == chunkTrailer {
			d.trailerBytes += len(line) + 2
			if d.trailerBytes > maxTrailerBytes {
				return n, produced, errTrailer
			}
			if len(line) == 0 {
				d.phase, d.done = chunkFinished, true
				return n, produced, nil
			}
			if err := d.addTrailer(line); err != nil {
				return n, produced, err
			}
			return n, produced, nil
		}
		size, err := parseChunkSize(line)
		if err != nil {
			return n, produced, err
		}
		if size == 0 {
			d.phase = chunkTrailer
		} else {
			d.phase, d.remaining = chunkData, size
		}
		return n, produced, nil
	case chunkData:
		k := int64(len(in))
		if !discard {
			k = min(k, int64(len(out)-produced))
		}
		k = min(k, d.remaining)
		if !discard {
			copy(out[produced:], in[:k])
			produced += int(k)
		}
		d.remaining -= k
		if d.remaining == 0 {
			d.phase = chunkDataCR
		}
		return int(k), produced, nil
	case chunkDataCR, chunkDataLF:
		want := byte('\r')
		if d.phase == chunkDataLF {
			want = '\n'
		}
		if in[0] != want {
			return 0, produced, errChunkLine
		}
		if d.phase == chunkDataCR {
			d.phase = chunkDataLF
		} else {
			d.phase = chunkSize
		}
		return 1, produced, nil
	}
	d.done = true
	return 0, produced, nil
}

// addTrailer checks the syntax of a trailer field line and keeps the
// field, as net/http does (every field, declared in the request's Trailer
// or not).
func (d *bodyDecoder) addTrailer(line []byte) error {
	colon := indexByte(line, ':')
	if colon <= 0 || !validToken(line[:colon]) {
		return errTrailer
	}
	value := trimOWS(line[colon+1:])
	if !validFieldValue(value) {
		return errTrailer
	}
	if d.trailer == nil {
		d.trailer = make(http.Header)
	}
	key := canonicalKey(line[:colon])
	d.trailer[key] = append(d.trailer[key], string(value))
	return nil
}

// mergeTrailer moves the trailer fields read into *dst (a request's
// Trailer): the declared names are set, or, with none declared, dst
// becomes the fields read, as net/http does.
func (d *bodyDecoder) mergeTrailer(dst *http.Header) {
	if d.trailer == nil {
		return
	}
	if *dst == nil {
		*dst = d.trailer
	} else {
		for k, vs := range d.trailer {
			(*dst)[k] = vs
		}
	}
	d.trailer = nil
}

// takeLine takes a CRLF-terminated line from in, joined with what d.line
// gathered before. It returns the line without its CRLF, the bytes of in
// consumed, and ok when the line is complete.
func (d *bodyDecoder) takeLine(in []byte) (line []byte, n int, ok bool, err error) {
	i := indexByte(in, '\n')
	if i < 0 {
		if len(d.line)+len(in) > maxChunkLine {
			return nil, len(in), false, errChunkTooLong
		}
		d.line = append(d.line, in...)
		return nil, len(in), false, nil
	}
	n = i + 1
	if len(d.line) > 0 {
		if len(d.line)+n > maxChunkLine {
			return nil, n, false, errChunkTooLong
		}
		d.line = append(d.line, in[:n]...)
		line = d.line
		d.line = d.line[:0]
	} else {
		line = in[:n]
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, n, false, errChunkLine // a bare LF
	}
	line = line[:len(line)-2]
	if len(line) > maxChunkLine {
		return nil, n, false, errChunkTooLong
	}
	return line, n, true, nil
}

// parseChunkSize parses a chunk-size line: hex digits, then optional
// chunk extensions (ignored; their bytes must not be controls) or white
// space.
func parseChunkSize(line []byte) (int64, error) {
	var size int64
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			goto ext
		}
		if i >= 16 || size > math.MaxInt64>>4 {
			// net/http's bound is 16 hex digits; a size past 2^63-1 is
			// refused, as no body that large arrives.
			return 0, fmt.Errorf("%w: chunk size too large", errChunkLine)
		}
		size = size<<4 | int64(v)
	}
ext:
	if i == 0 {
		return 0, errChunkLine
	}
	// As net/http: white space may end a size without extensions, but
	// not separate the size from its extensions.
	rest := line[i:]
	if len(rest) > 0 && rest[0] != ';' {
		if len(trimOWS(rest)) > 0 {
			return 0, errChunkLine
		}
		rest = nil
	}
	for _, b := range rest {
		if (b < ' ' && b != '\t') || b == 0x7f {
			return 0, errChunkLine
		}
	}
	return size, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
