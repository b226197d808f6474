//go:build !windows

package runtime_test

// underWine is false off Windows.
func underWine() bool { return false }
