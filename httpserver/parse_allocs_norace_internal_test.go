//go:build !race

package httpserver

import (
	"strings"
	"testing"
)

// The common header names, in any case, cost no allocation. Not under the
// race detector, whose instrumentation allocates.
func TestCanonicalKeyAllocs(t *testing.T) {
	for k := range commonKeys {
		lower := []byte(strings.ToLower(k))
		if n := testing.AllocsPerRun(10, func() { _ = canonicalKey(lower) }); n != 0 {
			t.Errorf("canonicalKey(%q): %v allocations", lower, n)
		}
	}
}
