package wsqueue

// pad keeps fields written by different goroutines on different cache lines.
//
// It is 128 bytes, not 64, for three reasons. On amd64, Intel's adjacent-line
// (spatial) prefetcher fetches 64-byte lines in aligned pairs, so two hot
// fields 64 bytes apart still interfere; on arm64 (Apple M-series, Neoverse
// with its 128-byte fetch granule) and ppc64 the line itself is 128 bytes.
// The price is a few hundred bytes per queue, which a worker-local queue pays
// once.
//
// golang.org/x/sys/cpu.CacheLinePad would size the pad per architecture, but
// this is a leaf module that imports only the standard library, so its users
// download nothing; the runtime's internal pad type is not importable. A fixed
// generous pad is the portable choice.
type pad [128]byte
