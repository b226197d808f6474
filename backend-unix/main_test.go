//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
