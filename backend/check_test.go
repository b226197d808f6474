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
		"openat":            {Kind: KindOpenAt, File: &FileArgs{Path: "f", OpenFlags: OpenRead | OpenCreate, Perm: 0o4755}},
		"fsync":             {Kind: KindFsync},
		"fdatasync":         {Kind: KindFsync, Flags: DataSync},
		"statx of FD":       {Kind: KindStatx, File: &FileArgs{}},
		"statx of a path":   {Kind: KindStatx, File: &FileArgs{Path: "/"}},
		"ftruncate to 0":    {Kind: KindFtruncate},
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
		"datasync on a write":  {Kind: KindWrite, Buf: buf, Flags: DataSync},
		"openat nil File":      {Kind: KindOpenAt},
		"openat empty path":    {Kind: KindOpenAt, File: &FileArgs{OpenFlags: OpenRead}},
		"openat NUL in path":   {Kind: KindOpenAt, File: &FileArgs{Path: "a\x00b", OpenFlags: OpenRead}},
		"openat no access":     {Kind: KindOpenAt, File: &FileArgs{Path: "f", OpenFlags: OpenCreate}},
		"openat wild perm":     {Kind: KindOpenAt, File: &FileArgs{Path: "f", OpenFlags: OpenRead, Perm: 0o10000}},
		"statx nil File":       {Kind: KindStatx},
		"statx NUL in path":    {Kind: KindStatx, File: &FileArgs{Path: "\x00"}},
		"ftruncate negative":   {Kind: KindFtruncate, Offset: -1},
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

// TestCheckCaps: the file-system kinds need their capability, the others
// none; a refusal is an *Error wrapping ErrUnsupported.
func TestCheckCaps(t *testing.T) {
	for k := KindNop; k < kindEnd; k++ {
		op := &Op{Kind: k}
		err := CheckCaps(op, 0)
		switch k {
		case KindOpenAt, KindFsync, KindStatx, KindFtruncate:
			var e *Error
			if !errors.Is(err, ErrUnsupported) || !errors.As(err, &e) || e.Op != k.String() {
				t.Errorf("%s without caps: %v, want an *Error wrapping ErrUnsupported", k, err)
			}
			if err := CheckCaps(op, CapFileOps|CapFtruncate); err != nil {
				t.Errorf("%s with the caps: %v", k, err)
			}
		default:
			if err != nil {
				t.Errorf("%s needs nothing, got %v", k, err)
			}
		}
	}
	if err := CheckCaps(&Op{Kind: KindFtruncate}, CapFileOps); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ftruncate with CapFileOps only: %v", err)
	}
}
