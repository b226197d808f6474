package backend

import "strings"

// CheckOp validates the fields of op that every backend checks the same way,
// and returns an error wrapping ErrInvalid for a request the contract does
// not allow. Backends call it first thing in Submit.
func CheckOp(op *Op) error {
	if op == nil {
		return NewError("submit", ErrInvalid, nil)
	}
	if !op.Kind.Valid() {
		return NewError("submit "+op.Kind.String(), ErrInvalid, nil)
	}
	bad := func(why string) error { return NewError(op.Kind.String()+": "+why, ErrInvalid, nil) }
	if op.Flags&Multishot != 0 && op.Kind != KindAccept {
		return bad("Multishot is for accept only")
	}
	if op.Flags&SelectBuffer != 0 && op.Kind != KindRecv {
		return bad("SelectBuffer is for recv only")
	}
	if op.Flags&PollFirst != 0 && op.Kind != KindRecv && op.Kind != KindRecvFrom {
		return bad("PollFirst is for recv and recvfrom only")
	}
	if op.Flags&DataSync != 0 && op.Kind != KindFsync {
		return bad("DataSync is for fsync only")
	}
	if op.Timeout < 0 {
		return bad("negative Timeout")
	}
	switch op.Kind {
	case KindCancel:
		if op.Target == nil {
			return bad("nil Target")
		}
		if op.Target == op {
			return bad("an op cannot cancel itself")
		}
		if op.Timeout != 0 {
			return bad("a cancel takes no Timeout")
		}
	case KindClose:
		if op.Timeout != 0 {
			return bad("a close takes no Timeout")
		}
	case KindConnect, KindSendTo:
		if op.Addr.IsZero() {
			return bad("no Addr")
		}
	case KindReadv, KindWritev:
		if len(op.Bufs) == 0 {
			return bad("no Bufs")
		}
	case KindRead, KindWrite:
		if op.Offset < -1 {
			return bad("Offset below -1")
		}
		if len(op.Buf) == 0 {
			return bad("empty Buf")
		}
	case KindRecv:
		if op.Flags&SelectBuffer == 0 && len(op.Buf) == 0 {
			return bad("empty Buf")
		}
	case KindSend:
		if len(op.Buf) == 0 {
			return bad("empty Buf")
		}
	case KindPoll:
		if op.Events&(EventIn|EventOut) == 0 {
			return bad("Events has neither EventIn nor EventOut")
		}
	case KindOpenAt, KindStatx:
		if err := checkFileArgs(op); err != "" {
			return bad(err)
		}
	case KindFtruncate:
		if op.Offset < 0 {
			return bad("negative Offset (the size)")
		}
	}
	if (op.Kind == KindReadv || op.Kind == KindWritev) && op.Offset < -1 {
		return bad("Offset below -1")
	}
	return nil
}

// checkFileArgs returns why op's File is not acceptable to its kind, or "".
func checkFileArgs(op *Op) string {
	a := op.File
	switch {
	case a == nil:
		return "nil File"
	case strings.IndexByte(a.Path, 0) >= 0:
		return "NUL byte in File.Path"
	case op.Kind == KindStatx:
		return ""
	case a.Path == "":
		return "empty File.Path"
	case a.OpenFlags&(OpenRead|OpenWrite) == 0:
		return "File.OpenFlags has neither OpenRead nor OpenWrite"
	case a.Perm&^0o7777 != 0:
		return "File.Perm has bits beyond 0o7777"
	}
	return ""
}

// CheckCaps returns an error wrapping ErrUnsupported when a backend with
// capabilities caps cannot serve op's kind (see Kind.Needs), nil
// otherwise. Backends call it in Submit after CheckOp, so that the kinds a
// platform lacks are refused the same way everywhere.
func CheckCaps(op *Op, caps Caps) error {
	if need := op.Kind.Needs(); !caps.Has(need) {
		return NewError(op.Kind.String(), ErrUnsupported, nil)
	}
	return nil
}
