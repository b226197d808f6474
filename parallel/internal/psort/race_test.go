//go:build race

package psort

// raceEnabled shrinks the sweeps under the race detector, which runs them
// ten times slower.
const raceEnabled = true
