package blitz_test

import "syscall"

// mapNoReserve keeps a big writable mapping out of Linux's commit
// accounting.
const mapNoReserve = syscall.MAP_NORESERVE
