//go:build !race

package rangeasync

const raceEnabled = false
