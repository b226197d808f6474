//go:build dragonfly || freebsd || netbsd || openbsd || solaris

package unixio

import "golang.org/x/sys/unix"

// releaseAdvice lets the system take the pages back (MADV_DONTNEED is only
// a hint on these systems and frees nothing).
const releaseAdvice = unix.MADV_FREE
