//go:build race

package unixio_test

const raceOn = true
