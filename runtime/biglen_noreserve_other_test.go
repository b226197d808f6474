//go:build unix && !linux

package runtime_test

// mapNoReserve: not needed (nor defined everywhere) here.
const mapNoReserve = 0
