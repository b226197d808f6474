//go:build !race

package simprims

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
