package blitz

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNoWaitBackOff: every read tries the page cache until noWaitMaxMisses
// misses in a row, then one in noWaitProbe does, and a hit starts over; a
// file without RWF_NOWAIT never tries again.
func TestNoWaitBackOff(t *testing.T) {
	var s noWaitState
	for range noWaitMaxMisses {
		assert.True(t, s.worth())
		s.misses.Add(1)
	}
	tries := 0
	for range 4 * noWaitProbe {
		if s.worth() {
			tries++
		}
	}
	assert.Equal(t, 4, tries)
	s.misses.Store(0) // a hit
	assert.True(t, s.worth())
	s.unsupported.Store(true)
	assert.False(t, s.worth())
}
