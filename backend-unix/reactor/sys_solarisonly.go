//go:build solaris && !illumos

package reactor

// afterAccept has nothing to add: Oracle Solaris's sends pass no
// MSG_NOSIGNAL (unixio.SendFlags), and the SIGPIPE of a send on a broken
// connection is one the Go runtime ignores; the send fails with EPIPE.
func afterAccept(int) error { return nil }
