package inspect_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used,
// and true.
func processCPU() (time.Duration, bool) { return rusage(syscall.RUSAGE_SELF) }

// threadCPU returns the CPU time the calling thread has used, and true;
// the caller locks its goroutine to the thread (runtime.LockOSThread).
func threadCPU() (time.Duration, bool) { return rusage(rusageThread) }

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not
// name.
const rusageThread = 1

func rusage(who int) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
