package header

// Seams for the external tests.

// SetStateForTest stores s as h's state word, bypassing the transitions, so
// that a test can start a transition from any state. Only a test that owns h
// may call it.
func (h *Header) SetStateForTest(s State) { h.state.Store(uint64(s)) }
