package blitz

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

// RingFileCloses is how many File Closes were io_uring closes so far, in
// this process.
func RingFileCloses() uint64 { return ringFileCloses.Load() }

// FileFD is the descriptor of f's ring side (InvalidFD without one).
func FileFD(f *File) backend.FD {
	if f.ring == nil {
		return backend.InvalidFD
	}
	return f.ring.fd
}

// FileOwnsFD reports whether f owns its descriptor (a ring open not handed
// out by OS).
func FileOwnsFD(f *File) bool { return f.ring != nil && f.ownsFD() }

// NoRingFileOps makes f's Sync, Stat and Truncate take the blocking pool,
// as when the ring refuses them.
func NoRingFileOps(f *File) {
	if f.ring != nil {
		f.ring.caps &^= backend.CapFileOps | backend.CapFtruncate
	}
}
