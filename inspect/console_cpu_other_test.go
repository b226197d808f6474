//go:build !linux

package inspect_test

import "time"

// processCPU reports false: the process's CPU time is read on Linux only.
func processCPU() (time.Duration, bool) { return 0, false }

// threadCPU reports false: a thread's CPU time is read on Linux only.
func threadCPU() (time.Duration, bool) { return 0, false }
