package scheduler

// pad keeps fields written by different goroutines on different cache lines
// (128 bytes for the adjacent-line prefetcher and arm64, as in wsqueue and
// idle; the module imports only the standard library and its siblings).
type pad [128]byte
