//go:build !unix

package blitz_test

// fdLimit is unknown here.
func fdLimit() int { return 0 }
