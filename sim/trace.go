package sim

import (
	"fmt"
	"strconv"
	"time"
)

// event is one entry of a run's trace: when (virtual time since the
// start), where, what, and a detail, text and a number (a task id, a
// life), kept apart so that recording a poll formats nothing.
type event struct {
	at     time.Duration
	host   string
	kind   string
	detail []byte
	num    uint64
	hasNum bool
}

// String formats the event as a trace line.
func (e event) String() string {
	d := string(e.detail)
	if e.kind == "clock" {
		return fmt.Sprintf("%12v %s %s +%v", e.at, e.host, e.kind, time.Duration(e.num))
	}
	if e.hasNum {
		d = strconv.FormatUint(e.num, 10)
		if len(e.detail) > 0 {
			d = string(e.detail) + " " + d
		}
	}
	return fmt.Sprintf("%12v %s %s %s", e.at, e.host, e.kind, d)
}

// traceLog is a run's fingerprint and the events it keeps: every event
// goes into the hash (FNV-1a over its fields as a line of text); the
// events themselves are kept all, or the last traceTail of them in a
// ring. Owned by the World's goroutine.
//
// Recording an event allocates nothing once the ring is full: the hash
// is computed from the fields as they come, and a ring slot keeps its
// detail's array for the next event it holds.
type traceLog struct {
	hash uint64
	all  bool
	// ring holds the events; with all, in order; otherwise the last
	// traceTail, the oldest at next once the ring is full.
	ring []event
	next int
	// arena holds the details of the events kept with all: each event's
	// detail is a piece of it (a full arena is replaced, the pieces
	// given out stay valid).
	arena []byte
	// at is the time of the last event and atText its decimal form:
	// events come many at a time between two jumps of the clock.
	at     time.Duration
	atText []byte
}

// fnvOffset and fnvPrime are FNV-1a's 64-bit parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func newTraceLog(all bool) traceLog { return traceLog{hash: fnvOffset, all: all} }

// fnvString hashes s into h.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// fnvBytes hashes b into h.
func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// fnvByte hashes c into h.
func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

// add records an event at at on host, of kind, whose detail is text
// followed by raw (either may be empty), then num if hasNum. raw is only
// read during the call.
func (l *traceLog) add(at time.Duration, host, kind, text string, raw []byte, num uint64, hasNum bool) {
	// The line hashed: "at host kind detail[ num]\n".
	if at != l.at || l.atText == nil {
		l.at, l.atText = at, strconv.AppendInt(l.atText[:0], int64(at), 10)
	}
	var nb [24]byte
	h := fnvBytes(l.hash, l.atText)
	h = fnvByte(h, ' ')
	h = fnvString(h, host)
	h = fnvByte(h, ' ')
	h = fnvString(h, kind)
	h = fnvByte(h, ' ')
	h = fnvString(h, text)
	h = fnvBytes(h, raw)
	if hasNum {
		h = fnvByte(h, ' ')
		h = fnvBytes(h, strconv.AppendUint(nb[:0], num, 10))
	}
	l.hash = fnvByte(h, '\n')

	var e *event
	switch {
	case l.all || len(l.ring) < traceTail:
		l.ring = append(l.ring, event{})
		e = &l.ring[len(l.ring)-1]
	default:
		e = &l.ring[l.next]
		l.next = (l.next + 1) % traceTail
	}
	d := e.detail[:0]
	if l.all {
		start := len(l.arena)
		l.arena = append(append(l.arena, text...), raw...)
		d = l.arena[start:len(l.arena):len(l.arena)]
	} else {
		d = append(append(d, text...), raw...)
	}
	*e = event{at: at, host: host, kind: kind, detail: d, num: num, hasNum: hasNum}
}

// lines formats the events kept, oldest first.
func (l *traceLog) lines() []string {
	out := make([]string, 0, len(l.ring))
	for i := range l.ring {
		out = append(out, l.ring[(l.next+i)%len(l.ring)].String())
	}
	return out
}
