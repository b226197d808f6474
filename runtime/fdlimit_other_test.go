//go:build !unix

package runtime_test

// fdLimit is unknown here.
func fdLimit() int { return 0 }
