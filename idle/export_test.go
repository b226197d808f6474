package idle

// Seams for the external tests.

// Claim runs the bitmap claim alone: it clears one set bit and returns its
// worker id, without touching the counts or sending a token.
func (s *State) Claim() (int, bool) { return s.claim() }

// ClaimWithoutToken does what NotifyOne does for worker id, except the send
// of the token: it takes a searcher slot (searching must be 0), clears id's
// bit (which must be set) and lowers parked. It reports false if either
// precondition fails. SendNotifyToken completes the claim.
func (s *State) ClaimWithoutToken(id int) bool {
	c := s.word.Load()
	if counts(c).searching() != 0 || !s.word.CompareAndSwap(c, c+searchingOne) {
		return false
	}
	mask := uint64(1) << (id & 63)
	if old := s.bitmap[id>>6].And(^mask); old&mask == 0 {
		s.word.Add(minusSearching)
		return false
	}
	s.word.Add(minusParked)
	return true
}

// SendNotifyToken sends worker id the token of a claim made by
// ClaimWithoutToken.
func (s *State) SendNotifyToken(id int) { s.send(id, wakeNotify) }
