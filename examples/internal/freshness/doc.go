// Package freshness holds the test that keeps the examples' generated files
// fresh: every *_async.go under examples/ is what the blitzgen generator of
// this repository writes from its source now.
package freshness
