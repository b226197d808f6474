//go:build !unix

package httpserver_test

import "time"

// processCPU is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
