//go:build race

package syncprim

// bnRace reports a -race build, where sync.Pool drops items at random, so
// the allocation tests of the blocking tier are skipped.
const bnRace = true
