//go:build !windows

package blitz

// killFoundExited reports whether err, from killing a child, says it had
// exited already. On Unix a child that exited is a zombie until reaped, and
// a signal to it succeeds, so no error means that.
func killFoundExited(error) bool { return false }
