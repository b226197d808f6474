//go:build unix && !linux

package backendtest

// mapNoReserve: no such flag is needed (or defined everywhere) here.
const mapNoReserve = 0
