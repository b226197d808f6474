//go:build race

package inspect_test

// raceEnabled says the tests run under the race detector, which slows the
// code several times: the time budgets are not checked.
const raceEnabled = true
