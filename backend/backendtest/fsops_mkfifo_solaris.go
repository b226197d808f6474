package backendtest

import "syscall"

// mkfifo makes a named pipe at path (the syscall package of illumos and
// Solaris has mknod, not mkfifo).
func mkfifo(path string) error { return syscall.Mknod(path, syscall.S_IFIFO|0o600, 0) }
