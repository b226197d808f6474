package backend

import (
	"errors"
	"testing"
	"time"
)

// TestCheckOpValid: ops every kind allows pass CheckOp.
func TestCheckOpValid(t *testing.T) {
	buf := make([]byte, 1)
	target := &Op{Kind: KindNop}
	valid := map[string]*Op{
		"nop":               {Kind: KindNop},
		"accept":            {Kind: KindAccept},
		"multishot accept":  {Kind: KindAccept, Flags: Multishot, Timeout: time.Second},
		"connect":           {Kind: KindConnect, Addr: UnixAddr("/s")},
		"recv":              {Kind: KindRecv, Buf: buf, Timeout: time.Second},
		"selectbuffer recv": {Kind: KindRecv, Flags: SelectBuffer},
		"send":              {Kind: KindSend, Buf: buf},
		"recvfrom":          {Kind: KindRecvFrom, Buf: buf},
		"sendto":            {Kind: KindSendTo, Buf: buf, Addr: UnixAddr("/s")},
		"read at -1":        {Kind: KindRead, Buf: buf, Offset: -1},
		"write at 10":       {Kind: KindWrite, Buf: buf, Offset: 10},
		"readv":             {Kind: KindReadv, Bufs: [][]byte{buf}},
		"writev at -1":      {Kind: KindWritev, Bufs: [][]byte{buf}, Offset: -1},
		"close":             {Kind: KindClose},
		"cancel":            {Kind: KindCancel, Target: target},
		"timeout":           {Kind: KindTimeout, Timeout: time.Second},
		"timeout 0":         {Kind: KindTimeout},
		"poll in":           {Kind: KindPoll, Events: EventIn},
		"poll out":          {Kind: KindPoll, Events: EventOut | EventErr},
	}
	for name, op := range valid {
		if err := CheckOp(op); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCheckOpInvalid: every rejection is an *Error wrapping ErrInvalid.
func TestCheckOpInvalid(t *testing.T) {
	buf := make([]byte, 1)
	self := &Op{Kind: KindCancel}
	self.Target = self
	invalid := map[string]*Op{
		"nil":                  nil,
		"zero kind":            {},
		"kind end":             {Kind: kindEnd},
		"multishot recv":       {Kind: KindRecv, Buf: buf, Flags: Multishot},
		"multishot nop":        {Kind: KindNop, Flags: Multishot},
		"selectbuffer send":    {Kind: KindSend, Buf: buf, Flags: SelectBuffer},
		"selectbuffer accept":  {Kind: KindAccept, Flags: SelectBuffer},
		"negative timeout":     {Kind: KindRecv, Buf: buf, Timeout: -1},
		"cancel nil target":    {Kind: KindCancel},
		"cancel itself":        self,
		"cancel with timeout":  {Kind: KindCancel, Target: &Op{}, Timeout: 1},
		"close with timeout":   {Kind: KindClose, Timeout: 1},
		"connect no addr":      {Kind: KindConnect},
		"sendto no addr":       {Kind: KindSendTo, Buf: buf},
		"readv no bufs":        {Kind: KindReadv},
		"writev no bufs":       {Kind: KindWritev},
		"readv offset -2":      {Kind: KindReadv, Bufs: [][]byte{buf}, Offset: -2},
		"read offset -2":       {Kind: KindRead, Buf: buf, Offset: -2},
		"read empty":           {Kind: KindRead},
		"write empty":          {Kind: KindWrite},
		"recv empty":           {Kind: KindRecv},
		"send empty":           {Kind: KindSend},
		"poll no events":       {Kind: KindPoll},
		"poll only err events": {Kind: KindPoll, Events: EventErr | EventHup},
	}
	for name, op := range invalid {
		err := CheckOp(op)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Sys != nil || e.Op == "" {
			t.Errorf("%s: %#v is not an *Error with an Op and no Sys", name, err)
		}
	}
}

// TestCheckOpAllocs: the accepting path allocates nothing (Submit calls it
// on every op).
func TestCheckOpAllocs(t *testing.T) {
	op := &Op{Kind: KindRecv, Buf: make([]byte, 8), Timeout: time.Second}
	if a := testing.AllocsPerRun(100, func() {
		if CheckOp(op) != nil {
			t.Fatal("rejected")
		}
	}); a != 0 {
		t.Errorf("CheckOp allocates %v times", a)
	}
}
