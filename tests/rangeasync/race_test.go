//go:build race

package rangeasync

const raceEnabled = true
