package syncprim

import (
	"sync"
	"sync/atomic"
)

// guardToken tells apart the acquisitions of a primitive that has several
// holders at once (an RwLock's readers), where a counter in the primitive
// cannot: each acquisition takes a token of its own, and its guard carries
// the token and the value of its seq at that moment. The guard's release
// moves seq on by one with a CAS from that value, before it releases the
// primitive, then recycles the token. A guard already released (or a copy
// of it) finds seq moved, even when the token has been recycled since, so
// it fails its CAS and cannot release what another holder holds.
//
// Tokens come from a sync.Pool, so that an acquisition allocates nothing
// in steady state. A stale guard keeps its token alive; the pool may drop
// tokens at any time, which only costs a new one later.
type guardToken struct {
	// seq counts the releases made with this token. Loaded by the acquirer
	// that took the token from the pool (which orders it after the last
	// release's CAS); CAS by a guard's release.
	seq atomic.Uint64
}

// guardTokens recycles guardTokens.
var guardTokens = sync.Pool{New: func() any { return new(guardToken) }}

// takeToken returns a token and its seq for the acquisition just made.
// The acquiring goroutine calls it.
func takeToken() (*guardToken, uint64) {
	t := guardTokens.Get().(*guardToken)
	return t, t.seq.Load() // the token is ours: nobody else can move seq past a CAS from this value
}

// releaseToken ends the acquisition of (t, seq), and reports false if it
// had already ended (a second release, through a copy or not). On true, t
// goes back to the pool: the caller must release the primitive it guarded
// right after, without looking at t again.
// Any goroutine may call it.
func releaseToken(t *guardToken, seq uint64) bool {
	if !t.seq.CompareAndSwap(seq, seq+1) { // pairs with the Load in takeToken
		return false
	}
	guardTokens.Put(t)
	return true
}
