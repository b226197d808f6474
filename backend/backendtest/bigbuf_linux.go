package backendtest

import "syscall"

// mapNoReserve keeps a big writable mapping out of Linux's commit
// accounting, so that a machine with less memory than the mapping still
// makes it.
const mapNoReserve = syscall.MAP_NORESERVE
