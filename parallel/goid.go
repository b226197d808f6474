package parallel

import "runtime"

// curGoid returns the id of the calling goroutine, parsed from the header
// line of runtime.Stack ("goroutine 42 [running]:"). Go hands out goroutine
// ids from a counter and never reuses one in a process. It costs a
// traceback of the current goroutine (about a microsecond), so it is used
// only where a pool-level call must tell whether it runs on one of the
// pool's workers (package doc, section "Calls from a worker without its
// Ctx"). Any goroutine may call it.
func curGoid() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	const prefix = "goroutine "
	if n <= len(prefix) || string(buf[:len(prefix)]) != prefix {
		panic("parallel: curGoid: unexpected runtime.Stack header")
	}
	var id uint64
	for _, ch := range buf[len(prefix):n] {
		if ch < '0' || ch > '9' {
			break
		}
		id = id*10 + uint64(ch-'0')
	}
	return id
}
