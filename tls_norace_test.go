//go:build !race

package blitz_test

// tlsRace is true under the race detector; see tls_race_test.go.
const tlsRace = false
