//go:build linux && !race

package peers

// raceEnabled is true under the race detector.
const raceEnabled = false
