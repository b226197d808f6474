package unixio

import "golang.org/x/sys/unix"

// releaseAdvice lets the system take the pages back and takes them out of
// the task's memory footprint at once, as Go's own runtime does on macOS
// (MADV_FREE alone leaves them counted until the system needs memory).
const releaseAdvice = unix.MADV_FREE_REUSABLE
