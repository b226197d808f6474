//go:build race

package backendtest

// raceEnabled says the race detector is on: allocation counts mean little.
const raceEnabled = true
