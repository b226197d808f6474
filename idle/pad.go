package idle

// pad keeps fields written by different goroutines on different cache lines.
//
// It is 128 bytes, not 64, as in wsqueue: Intel's adjacent-line prefetcher
// pairs 64-byte lines, and arm64 (Apple M-series, Neoverse) and ppc64 have
// 128-byte lines or fetch granules. This is a leaf module that imports only
// the standard library, so golang.org/x/sys/cpu.CacheLinePad is not used.
type pad [128]byte
