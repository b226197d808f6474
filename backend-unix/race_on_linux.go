//go:build linux && race

package unixio

import (
	"runtime"
	"unsafe"
)

// raceWritten tells the race detector that the kernel wrote n bytes at p
// for the calling goroutine, as x/sys/unix's Read does.
func raceWritten(p unsafe.Pointer, n int) {
	if n > 0 {
		runtime.RaceWriteRange(p, n)
	}
}
