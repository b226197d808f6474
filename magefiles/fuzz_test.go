package main

import "testing"

// TestCoordinatorDeadlineOnly checks the fuzz runner's reading of a failed run: only the coordinator's bare
// deadline error, with no input written and no other failure, is run again.
func TestCoordinatorDeadlineOnly(t *testing.T) {
	const race = `fuzz: elapsed: 15s, execs: 20146 (875/sec), new interesting: 9 (total: 122)
fuzz: elapsed: 16s, execs: 20146 (0/sec), new interesting: 9 (total: 122)
--- FAIL: FuzzDifferential (16.11s)
    context deadline exceeded
FAIL
exit status 1
FAIL	github.com/blitz-go/blitz/httpserver	16.156s
`
	const finding = `fuzz: elapsed: 3s, execs: 994 (331/sec), new interesting: 2 (total: 115)
--- FAIL: FuzzDifferential (3.20s)
    --- FAIL: FuzzDifferential (0.00s)
        differential_test.go:88: status 400 against net/http's 200

    Failing input written to testdata/fuzz/FuzzDifferential/0123456789abcdef
    To re-run:
    go test -run=FuzzDifferential/0123456789abcdef
FAIL
`
	const inTarget = `--- FAIL: FuzzDifferential (16.11s)
    differential_test.go:120: context deadline exceeded
FAIL
`
	const otherTarget = `--- FAIL: FuzzParseRequest (16.11s)
    context deadline exceeded
FAIL
`
	const buildFailure = `# github.com/blitz-go/blitz/httpserver [github.com/blitz-go/blitz/httpserver.test]
./fuzz_test.go:12:2: undefined: x
FAIL	github.com/blitz-go/blitz/httpserver [build failed]
`
	for _, c := range []struct {
		name string
		out  string
		want bool
	}{
		{"coordinator race", race, true},
		{"finding", finding, false},
		{"deadline inside the target", inTarget, false},
		{"another target's failure", otherTarget, false},
		{"build failure", buildFailure, false},
		{"empty output", "", false},
		{"race as the last line", "--- FAIL: FuzzDifferential (16.11s)", false},
	} {
		if got := coordinatorDeadlineOnly(c.out, "FuzzDifferential"); got != c.want {
			t.Errorf("%s: coordinatorDeadlineOnly = %v, want %v", c.name, got, c.want)
		}
	}
}
