package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchPatternNamesEachLeafShallowFirst(t *testing.T) {
	p := benchPattern([]string{"BenchmarkPingPong", "BenchmarkMutex"}, map[string][]string{
		"BenchmarkPingPong": {"blitz/auto", "goroutines"},
		"BenchmarkMutex":    {"contended4/blitz", "contended4/syncMutex"},
	})
	assert.Equal(t, `^BenchmarkPingPong$/^goroutines$|`+
		`^BenchmarkPingPong$/^blitz$/^auto$|^BenchmarkMutex$/^contended4$/^blitz$|^BenchmarkMutex$/^contended4$/^syncMutex$`, p)
	assert.Equal(t, `^BenchmarkForkJoinTree$/^depth=15$`, benchPattern([]string{"BenchmarkForkJoinTree"},
		map[string][]string{"BenchmarkForkJoinTree": {"depth=15"}}))
}

// TestBenchPatternRunsExactlyTheLeaves runs go test with a pattern from benchPattern on a benchmark
// shaped like the runtime's (a/auto, a/none, b): the leaves named run and report, the others do not.
func TestBenchPatternRunsExactlyTheLeaves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test binary")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.24\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(`package p

import "testing"

func BenchmarkX(b *testing.B) {
	for _, name := range []string{"blitz", "blitz-iface"} {
		b.Run(name+"/auto", func(b *testing.B) { for range b.N {} })
		b.Run(name+"/none", func(b *testing.B) { for range b.N {} })
	}
	b.Run("goroutines", func(b *testing.B) { for range b.N {} })
}

func BenchmarkY(b *testing.B) { for range b.N {} }
`), 0o644))
	pattern := benchPattern([]string{"BenchmarkX"}, map[string][]string{"BenchmarkX": {"blitz/auto", "goroutines"}})
	cmd := exec.Command("go", "test", "-run=^$", "-bench="+pattern, "-benchtime=1x", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	rs, err := parseBench(strings.NewReader(string(out)))
	require.NoError(t, err)
	assert.Equal(t, []string{"BenchmarkX/blitz/auto", "BenchmarkX/goroutines"}, rs.order)
}

func TestPlanGroupsByModuleAndBenchtime(t *testing.T) {
	cs := []comparison{
		{"wsqueue", "BenchmarkLocalPushPop", "wsqueue", "chan", "push+pop", ""},
		{".", "BenchmarkFileRead", "uring", "osFileGoroutines", "4 KiB read", ""},
		{".", "BenchmarkSpawnMany", "blitz", "goroutines", "task", ""},
		{".", "BenchmarkIdleTaskMemory", "blitz/auto", "goroutines", "idle task", "bytes/task"},
		{"wsqueue", "BenchmarkLocalPushPop", "wsqueue", "mutexdeque", "push+pop", ""},
	}
	invs := plan(cs, "50ms", 0)
	require.Len(t, invs, 4)
	assert.Equal(t, invocation{Module: "wsqueue", Benchtime: "50ms", Benches: []string{"BenchmarkLocalPushPop"},
		Pattern: `^BenchmarkLocalPushPop$/^wsqueue$|^BenchmarkLocalPushPop$/^chan$|^BenchmarkLocalPushPop$/^mutexdeque$`}, invs[0])
	assert.Equal(t, ".", invs[1].Module)
	assert.Equal(t, "50ms", invs[1].Benchtime, "the run's benchtime first")
	assert.Equal(t, []string{"BenchmarkSpawnMany"}, invs[1].Benches)
	assert.Equal(t, "100000x", invs[2].Benchtime)
	assert.Equal(t, []string{"BenchmarkFileRead"}, invs[2].Benches)
	assert.Equal(t, "1x", invs[3].Benchtime)

	// IdleTaskMemory's shape caps it at 3 runs.
	for _, inv := range plan(cs, "50ms", 3) {
		assert.NotContains(t, inv.Benches, "BenchmarkIdleTaskMemory")
	}
}

// TestAddRunPairsByRun: results of separate invocations carry their run, so a run that failed on one
// side does not shift the pairing of the others.
func TestAddRunPairsByRun(t *testing.T) {
	rs := newResults()
	for run, out := range []string{
		benchLines("BenchmarkLocalPushPop/wsqueue", 1000, 10) + benchLines("BenchmarkLocalPushPop/chan", 1000, 20),
		benchLines("BenchmarkLocalPushPop/wsqueue", 1000, 10), // chan failed in run 1
		benchLines("BenchmarkLocalPushPop/wsqueue", 1000, 10) + benchLines("BenchmarkLocalPushPop/chan", 1000, 40),
	} {
		one, err := parseBench(strings.NewReader(out))
		require.NoError(t, err)
		rs.addRun(one, run)
	}
	r := buildRows(sampleComparisons[:1], rs)[0]
	assert.Equal(t, 2, r.Runs)
	assert.InDelta(t, 2, r.Lo, 1e-9)
	assert.InDelta(t, 4, r.Hi, 1e-9)
}
