//go:build !unix

package twintest

// fdLimit reports no limit where the platform has no RLIMIT_NOFILE.
func fdLimit() (int, bool) { return 0, false }
