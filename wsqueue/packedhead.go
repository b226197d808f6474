package wsqueue

// The packed head of the local queue: a snapshot value with pure accessors,
// which any goroutine may call.
// The cell is the atomic.Uint64 field queue.head; every read and CAS of it is
// written out at its call site with its ordering comment.

// head is a snapshot of the local queue's 64-bit head word: the upper 32 bits
// hold the steal index, the lower 32 bits the real index. Indices are uint32
// positions that wrap at 2^32; a slot is index & mask. Only differences of
// indices are meaningful (tail-real, tail-steal), never their order: see the
// package doc, section "ABA and index wrap".
//
//   - real is the next item a consumer (owner pop, stealer claim, overflow
//     claim) may take. Items in [real, tail) are in the queue.
//   - steal is real unless a stealer is between its claim and its
//     completion; then [steal, realAtClaim) are the claimed items it is still
//     copying, and those slots are not free for the owner to overwrite.
type head uint64

// packHead builds a head word from its two indices.
func packHead(steal, real uint32) head {
	return head(uint64(steal)<<32 | uint64(real))
}

// steal returns the steal index: the first slot not yet free for reuse.
func (h head) steal() uint32 { return uint32(h >> 32) }

// real returns the real index: the oldest item still in the queue.
func (h head) real() uint32 { return uint32(h) }

// stealing reports whether a stealer is between its claim and its completion.
func (h head) stealing() bool { return h.steal() != h.real() }
