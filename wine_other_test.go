//go:build !windows

package blitz_test

// underWine is false off Windows.
func underWine() bool { return false }
