//go:build linux || aix

package unixio

import "golang.org/x/sys/unix"

// releaseAdvice drops the pages at once; they read as zeros afterwards.
const releaseAdvice = unix.MADV_DONTNEED
