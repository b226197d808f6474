package simkv

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// Entry is one write of the replicated log: the Index-th (from 1) PUT the
// leader accepted.
type Entry struct {
	Index int
	Key   string
	Value string
}

// maxToken bounds the length of a key or a value.
const maxToken = 64

// errBadToken is the error of a key or value the protocol cannot carry.
var errBadToken = errors.New("simkv: keys and values are 1 to 64 bytes without spaces")

// validToken reports whether s can be a key or a value: non-empty, short,
// and without the separators of the line protocol.
func validToken(s string) bool {
	return s != "" && len(s) <= maxToken && !strings.ContainsAny(s, " \t\r\n")
}

// body is the part of a record that its checksum covers, also the payload
// of an ENTRY message: "index key value".
func (e Entry) body() string {
	return strconv.Itoa(e.Index) + " " + e.Key + " " + e.Value
}

// appendRecord appends e's log record to buf: its body and the CRC-32 of
// the body in hex, then a newline. A record cut short (a torn write) or
// with a flipped bit fails parseRecord.
func appendRecord(buf []byte, e Entry) []byte {
	b := e.body()
	buf = append(buf, b...)
	buf = append(buf, ' ')
	buf = fmt.Appendf(buf, "%08x", crc32.ChecksumIEEE([]byte(b)))
	return append(buf, '\n')
}

// parseBody parses "index key value".
func parseBody(s string) (Entry, error) {
	idx, rest, ok := strings.Cut(s, " ")
	key, value, ok2 := strings.Cut(rest, " ")
	n, err := strconv.Atoi(idx)
	if !ok || !ok2 || err != nil || n < 1 || !validToken(key) || !validToken(value) {
		return Entry{}, fmt.Errorf("simkv: bad entry %q", s)
	}
	return Entry{Index: n, Key: key, Value: value}, nil
}

// parseRecord parses one record line (without its newline) and checks its
// checksum.
func parseRecord(line []byte) (Entry, error) {
	i := bytes.LastIndexByte(line, ' ')
	if i < 0 {
		return Entry{}, fmt.Errorf("simkv: bad record %q", line)
	}
	sum, err := strconv.ParseUint(string(line[i+1:]), 16, 32)
	if err != nil || len(line)-i-1 != 8 || uint32(sum) != crc32.ChecksumIEEE(line[:i]) {
		return Entry{}, fmt.Errorf("simkv: bad checksum in record %q", line)
	}
	return parseBody(string(line[:i]))
}

// parseLog parses the records of a log file's content. It returns the
// entries of the longest good prefix (checksums right, indexes 1, 2, ...)
// and its length in bytes; a crash can leave a torn record at the end,
// which the caller cuts off at good.
func parseLog(data []byte) (entries []Entry, good int) {
	for good < len(data) {
		nl := bytes.IndexByte(data[good:], '\n')
		if nl < 0 {
			break // a record without its newline: torn
		}
		e, err := parseRecord(data[good : good+nl])
		if err != nil || e.Index != len(entries)+1 {
			break
		}
		entries = append(entries, e)
		good += nl + 1
	}
	return entries, good
}
