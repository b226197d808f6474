package runtime

import "github.com/blitz-go/blitz/backend"

// FileOnRing reports whether f's data operations are io_uring operations.
func FileOnRing(f *File) bool { return f.ring != nil }

// RingFileOps is how many file-system ops of kind k (backend.KindOpenAt,
// KindFsync, KindStatx, KindFtruncate) the runtime has handed to an
// io_uring ring so far, in this process.
func RingFileOps(k backend.Kind) uint64 {
	return ringFileOps[int(k)-int(backend.KindOpenAt)].Load()
}

// NoRingTruncate makes f's Truncate take the blocking pool, as on a kernel
// without IORING_OP_FTRUNCATE. Before f's first Truncate only.
func NoRingTruncate(f *File) {
	if f.ring != nil {
		f.ring.caps &^= backend.CapFtruncate
	}
}
