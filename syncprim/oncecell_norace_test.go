//go:build !race

package syncprim

// bnRace reports a -race build (see oncecell_race_test.go).
const bnRace = false
