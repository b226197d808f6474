//go:build race

package scheduler_test

// raceEnabled says the tests run under the race detector, whose sync.Pool
// drops a share of what is put in it at random.
const raceEnabled = true
