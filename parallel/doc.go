// Package parallel is the fork-join sibling of the blitz runtime: a
// Rayon-style pool of worker goroutines with a Chase-Lev deque each.
package parallel
