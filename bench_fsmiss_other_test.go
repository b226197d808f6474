//go:build !linux

package blitz_test

import "time"

// processCPU reports 0: the CPU time is measured on Linux only.
func processCPU() time.Duration { return 0 }
