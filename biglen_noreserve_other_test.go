//go:build unix && !linux

package blitz_test

// mapNoReserve: not needed (nor defined everywhere) here.
const mapNoReserve = 0
