package backend

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
	}
	if (op.Kind == KindReadv || op.Kind == KindWritev) && op.Offset < -1 {
		return bad("Offset below -1")
	}
	return nil
}
