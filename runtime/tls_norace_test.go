//go:build !race

package runtime_test

// tlsRace is true under the race detector; see tls_race_test.go.
const tlsRace = false
