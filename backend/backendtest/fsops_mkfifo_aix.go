package backendtest

import "errors"

// mkfifo: AIX's syscall package has neither mkfifo nor mknod.
func mkfifo(string) error { return errors.ErrUnsupported }
