// Package testfile has an async function in a test file: its generated
// file is a test file too (x_test.go gives x_async_test.go).
package testfile

// Double doubles.
func Double(n int) int { return 2 * n }
