package parallel

// pad keeps fields written by different goroutines on different cache lines:
// 128 bytes, for the adjacent-line prefetcher on amd64 and the 128-byte lines
// of arm64 and ppc64, as in wsqueue and scheduler. The module imports only
// the standard library and wsqueue, so golang.org/x/sys/cpu.CacheLinePad is
// not used.
type pad [128]byte
