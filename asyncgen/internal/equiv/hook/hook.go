// Package hook holds a package-level function variable for the equivalence
// test: a deferred call of it, qualified by the package's name, reads the
// variable at the defer statement.
package hook

// Note is set by the test's async functions.
var Note func(s string)
