package header

import (
	"encoding/binary"
	"testing"
)

// FuzzHeaderMatchesModel drives the model test from fuzz bytes: the first
// eight bytes (little-endian) are the starting state word, masked to the
// fields that exist, and every following byte is one operation. The
// reserved bits are cleared and a lifecycle past Complete is folded into the
// four that exist, so every input is a state Init or a transition could
// produce.
func FuzzHeaderMatchesModel(f *testing.F) {
	seed := func(s State, ops ...int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(s))
		for _, op := range ops {
			b = append(b, byte(op))
		}
		return b
	}
	// A spawned task polled twice, woken during the second poll, completed.
	f.Add(seed(MakeState(Idle, false, false, true, false, 0, 2),
		opSchedule, opRun, opIdle, opSchedule, opRun, opSchedule, opIdle, opRun, opComplete, opUnref, opUnref))
	// Cancelled while idle behind a shield, woken, shield removed, aborted.
	f.Add(seed(MakeState(Running, false, false, true, false, 0, 2),
		opAddShield, opIdle, opCancel, opSchedule, opRun, opRemoveShield, opIdle, opComplete, opDetach, opUnref))
	// The edges of the counters.
	f.Add(seed(MakeState(Running, false, false, false, true, MaxShieldDepth, MaxRefCount),
		opAddShield, opRef, opRemoveShield, opUnref, opRef, opRef))
	f.Add(seed(MakeState(Idle, false, false, false, false, 0, 0),
		opUnref, opRemoveShield, opRun, opIdle, opComplete, opCancel))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 8 {
			return
		}
		raw := State(binary.LittleEndian.Uint64(data))
		m := modelOf(raw)
		m.lifecycle %= 4
		c := newChecker(m.state())
		for _, b := range data[8:] {
			if msg := c.step(int(b) % opCount); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}
