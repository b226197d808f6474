package sim

import (
	"fmt"
	"strconv"
	"time"
)

// event is one entry of a run's trace: when (virtual time since the
// start), where, what, and a detail, either text or a number (a task id, a
// life), kept apart so that recording a poll formats nothing.
type event struct {
	at     time.Duration
	host   string
	kind   string
	detail string
	num    uint64
	hasNum bool
}

// String formats the event as a trace line.
func (e event) String() string {
	d := e.detail
	if e.kind == "clock" {
		return fmt.Sprintf("%12v %s %s +%v", e.at, e.host, e.kind, time.Duration(e.num))
	}
	if e.hasNum {
		d = strconv.FormatUint(e.num, 10)
		if e.detail != "" {
			d = e.detail + " " + d
		}
	}
	return fmt.Sprintf("%12v %s %s %s", e.at, e.host, e.kind, d)
}

// traceLog is a run's fingerprint and the events it keeps: every event
// goes into the hash (FNV-1a over its fields); the events themselves are
// kept all, or the last traceTail of them in a ring. Owned by the World's
// goroutine.
type traceLog struct {
	hash uint64
	all  bool
	// ring holds the events; with all, in order; otherwise the last
	// traceTail, the oldest at next once the ring is full.
	ring []event
	next int
	buf  []byte
}

// fnvOffset and fnvPrime are FNV-1a's 64-bit parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func newTraceLog(all bool) traceLog { return traceLog{hash: fnvOffset, all: all} }

// add records e.
func (l *traceLog) add(e event) {
	b := l.buf[:0]
	b = strconv.AppendInt(b, int64(e.at), 10)
	b = append(b, ' ')
	b = append(b, e.host...)
	b = append(b, ' ')
	b = append(b, e.kind...)
	b = append(b, ' ')
	b = append(b, e.detail...)
	if e.hasNum {
		b = append(b, ' ')
		b = strconv.AppendUint(b, e.num, 10)
	}
	b = append(b, '\n')
	h := l.hash
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	l.hash, l.buf = h, b
	switch {
	case l.all || len(l.ring) < traceTail:
		l.ring = append(l.ring, e)
	default:
		l.ring[l.next] = e
		l.next = (l.next + 1) % traceTail
	}
}

// lines formats the events kept, oldest first.
func (l *traceLog) lines() []string {
	out := make([]string, 0, len(l.ring))
	for i := range l.ring {
		out = append(out, l.ring[(l.next+i)%len(l.ring)].String())
	}
	return out
}
