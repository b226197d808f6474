//go:build race

package blitz_test

// tlsRace is true under the race detector, which makes the TLS tests'
// cryptography several times slower: they trim their largest loads.
const tlsRace = true
