// Package wsqueuelin holds tests only: it records concurrent histories of
// wsqueue's local queue and Chase-Lev deque through their exported API and
// checks them for linearizability with github.com/anishathalye/porcupine.
//
// It lives in the module github.com/blitz-go/blitz/tests, which is not
// published, so that wsqueue itself requires nothing: users who depend on
// wsqueue never download the checker. wsqueue's own tests check histories
// that only its test seams can produce (indices near 2^32, steals paused
// between phases, the reason a steal took nothing) with a small search of
// their own; this package is the cross-check by an independent checker.
package wsqueuelin
