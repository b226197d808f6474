package globalq

// pad keeps fields written by different goroutines on different cache lines:
// a queue's lock word and length away from its neighbours in memory, and each
// shard of a [Sharded] away from the next.
//
// It is 128 bytes, not 64, for the reasons wsqueue's pad gives: Intel's
// adjacent-line prefetcher pairs 64-byte lines, and arm64 (Apple M-series,
// Neoverse) and ppc64 have 128-byte lines or fetch granules.
// golang.org/x/sys/cpu.CacheLinePad would size it per architecture, but this
// is a leaf module that imports only the standard library.
type pad [128]byte
