package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/blitz-go/blitz/wsqueue
cpu: Some CPU @ 2.00GHz
BenchmarkLocalPushPop/wsqueue-2         	100000000	        10.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLocalPushPop/wsqueue-2         	100000000	        12.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLocalPushPop/wsqueue-2         	100000000	        30.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLocalPushPop/chan-2            	 20000000	        60.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkLocalPushPop/chan-2            	 20000000	        64.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkStealContended/wsqueue         	 1000	      5.5 ns/op	 181.8 Melem/s
--- BENCH: BenchmarkSomething
    bench_test.go:12: a log line
PASS
ok  	github.com/blitz-go/blitz/wsqueue	3.21s
`

func TestParseBenchKeepsOnlyBenchmarkLines(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	assert.Equal(t, []string{"BenchmarkLocalPushPop/wsqueue", "BenchmarkLocalPushPop/chan", "BenchmarkStealContended/wsqueue"}, rs.order)
	assert.Len(t, rs.byName["BenchmarkLocalPushPop/wsqueue"], 3)
}

func TestParseLineStripsProcsSuffixAndReadsMetrics(t *testing.T) {
	res, ok := parseLine("BenchmarkStealContended/wsqueue-16  1000  5.5 ns/op  181.8 Melem/s  0 B/op  0 allocs/op")
	require.True(t, ok)
	assert.Equal(t, "BenchmarkStealContended/wsqueue", res.Name)
	assert.Equal(t, 1000, res.N)
	assert.Equal(t, map[string]float64{"ns/op": 5.5, "Melem/s": 181.8, "B/op": 0, "allocs/op": 0}, res.Metrics)
}

func TestParseLineRejectsNonResults(t *testing.T) {
	for _, line := range []string{
		"BenchmarkFoo",                      // a name printed alone before a long run
		"BenchmarkFoo-2  abc  1 ns/op",      // no iteration count
		"BenchmarkFoo-2  10  1 ns/op extra", // odd field count
		"BenchmarkFoo-2  10  1 B/op",        // no ns/op
		"--- FAIL: BenchmarkFoo",
		"ok  	github.com/x	1.0s",
	} {
		_, ok := parseLine(line)
		assert.False(t, ok, line)
	}
}

func TestMedianOddEvenAndMissing(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	m, ok := rs.median("BenchmarkLocalPushPop/wsqueue", "ns/op")
	require.True(t, ok)
	assert.Equal(t, 12.0, m) // median of 10, 12, 30: one outlier does not move it
	m, ok = rs.median("BenchmarkLocalPushPop/chan", "ns/op")
	require.True(t, ok)
	assert.Equal(t, 62.0, m)
	_, ok = rs.median("BenchmarkNope/x", "ns/op")
	assert.False(t, ok)
}

// TestParseBenchNumbersRunsPerPackage: a benchmark's k-th line in a package is its run k-1, and a
// same-named benchmark of another package does not count for the module.
func TestParseBenchNumbersRunsPerPackage(t *testing.T) {
	out := "pkg: github.com/blitz-go/blitz/globalq\ncpu: Some CPU\n" +
		"BenchmarkPushPop/chan-2  100  30 ns/op\nBenchmarkPushPop/chan-2  100  31 ns/op\n" +
		"pkg: github.com/blitz-go/blitz/globalq/internal/other\n" +
		"BenchmarkPushPop/chan-2  100  99 ns/op\n"
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, "Some CPU", rs.cpu)
	runs := rs.runsOf("globalq", "BenchmarkPushPop/chan")
	require.Len(t, runs, 2)
	assert.Equal(t, 30.0, runs[0].Metrics["ns/op"])
	assert.Equal(t, 31.0, runs[1].Metrics["ns/op"])
	all := rs.byName["BenchmarkPushPop/chan"]
	require.Len(t, all, 3)
	assert.Equal(t, 0, all[2].Run, "the other package's first line is its run 0")
}

// TestRunsOfTheRootModule: the root module's benchmarks (directory ".")
// are found by its package's import path, and no other module's are.
func TestRunsOfTheRootModule(t *testing.T) {
	out := "pkg: github.com/blitz-go/blitz\nBenchmarkTCPEcho/uring-2 \t 100\t 16386 ns/op\n" +
		"pkg: github.com/blitz-go/blitz/parallel\nBenchmarkTCPEcho/uring-2 \t 100\t 99 ns/op\n"
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	runs := rs.runsOf(".", "BenchmarkTCPEcho/uring")
	if len(runs) != 1 {
		t.Fatalf("runs of the root module: %v", runs)
	}
	for _, r := range runs {
		if r.Pkg != rootPackage {
			t.Errorf("run of %s", r.Pkg)
		}
	}
	if runs := rs.runsOf("parallel", "BenchmarkTCPEcho/uring"); len(runs) != 1 {
		t.Errorf("runs of parallel: %v", runs)
	}
}
