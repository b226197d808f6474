package blitz

import "sync/atomic"

// useCount counts the operations that use a descriptor, and marks it
// closing: what a socket (netFD) and a file's ring side (fileRing) share,
// Go's fdMutex reduced to this. An operation acquires before it touches
// the descriptor (or hands it to the backend) and releases after; once
// markClosing ran, acquire fails, and the release that brings the count to
// zero learns that it was the last one, so its caller can finish the close
// (release the descriptor, wake the Close). Any goroutine may call the
// methods.
type useCount struct {
	// n is the count of uses in the low bits and closingBit. Every method
	// is one atomic read-modify-write on it (or a CAS loop), which orders
	// the close against the uses: a use that acquired before markClosing
	// is counted in markClosing's result, and one after it fails. 32 bits:
	// uses in flight at once are a handful (a read, a write, an address
	// lookup), far from 2^31, and the socket record packs the count beside
	// its flags.
	n atomic.Uint32
}

// closingBit marks a useCount closing.
const closingBit = 1 << 31

// acquire registers a use; it reports false once the count is closing.
// Every true is paired with a release.
func (u *useCount) acquire() bool {
	for {
		c := u.n.Load()
		if c&closingBit != 0 {
			return false
		}
		if u.n.CompareAndSwap(c, c+1) {
			return true
		}
	}
}

// release ends a use and reports whether it was the last one after
// markClosing: exactly one release does, unless markClosing found no use.
func (u *useCount) release() bool {
	return u.n.Add(^uint32(0)) == closingBit
}

// markClosing sets the closing bit. It reports whether it was already set
// (a second close) and whether uses are in flight: if none is, no release
// will report last, and the caller finishes the close itself.
func (u *useCount) markClosing() (already, busy bool) {
	old := u.n.Or(closingBit)
	return old&closingBit != 0, old&^closingBit != 0
}
