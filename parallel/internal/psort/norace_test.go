//go:build !race

package psort

const raceEnabled = false
