//go:build (solaris && !illumos) || aix

package unixio

// afterSocket has nothing to add: sends pass SendFlags, and a SIGPIPE where
// they cannot stop it is one the Go runtime ignores.
func afterSocket(int) error { return nil }
