//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || aix

package unixio

import "golang.org/x/sys/unix"

// reusePortOpt returns SO_REUSEPORT, the option of OptReusePort.
func reusePortOpt() (int, error) { return unix.SO_REUSEPORT, nil }
