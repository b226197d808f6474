//go:build solaris && !illumos

package unixio

// SendFlags: Oracle Solaris before 11.4 refuses MSG_NOSIGNAL. A send on a
// broken connection raises SIGPIPE there, which the Go runtime ignores for
// every descriptor but standard output and error; the send fails with
// EPIPE (backend.ErrBrokenPipe).
const SendFlags = 0
