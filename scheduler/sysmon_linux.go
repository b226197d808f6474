package scheduler

import "syscall"

// wakeSysmon makes one ordinary system call (getpid): Go's entersyscall
// wakes sysmon if it sleeps deeply (the package doc, "Go's sysmon"). A
// variable, so that tests can count the wakes.
var wakeSysmon = func() { _, _, _ = syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0) }
