package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sampleComparisons = []comparison{
	{"wsqueue", "BenchmarkLocalPushPop", "wsqueue", "chan", "push+pop", ""},
	{"wsqueue", "BenchmarkStealContended", "wsqueue", "chan", "element moved", ""},
}

// TestBuildRowsReadsCustomMetric compares on the metric a comparison names (bytes/task, ns/yield)
// instead of ns/op.
func TestBuildRowsReadsCustomMetric(t *testing.T) {
	out := "BenchmarkIdleTaskMemory/blitz/auto-2  1  900000 ns/op  184.0 bytes/task\n" +
		"BenchmarkIdleTaskMemory/goroutines-2  1  100000 ns/op  2642 bytes/task\n"
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows := buildRows([]comparison{{".", "BenchmarkIdleTaskMemory", "blitz/auto", "goroutines", "idle task", "bytes/task"}}, rs)
	require.True(t, rows[0].Measured())
	assert.InDelta(t, 184.0, rows[0].OursNs, 1e-9)
	assert.InDelta(t, 2642.0/184.0, rows[0].Speedup(), 1e-9)
	var md strings.Builder
	writeMarkdown(&md, nil, rows)
	assert.Contains(t, md.String(), "bytes/task, per idle task")
}

// TestBuildRowsPairsRunByRun: the speedup is the median of run i's baseline over run i's ours, and the
// range their smallest and largest; a run that only one side has is left out.
func TestBuildRowsPairsRunByRun(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	rows := buildRows(sampleComparisons, rs)
	require.Len(t, rows, 2)
	r := rows[0]
	assert.Equal(t, faster, r.Verdict)
	assert.Equal(t, 2, r.Runs, "ours has 3 runs, chan 2: the third is not paired")
	assert.InDelta(t, (60.0/10+64.0/12)/2, r.Speedup(), 1e-9)
	assert.InDelta(t, 64.0/12, r.Lo, 1e-9)
	assert.InDelta(t, 60.0/10, r.Hi, 1e-9)
	assert.InDelta(t, 11.0, r.OursNs, 1e-9, "median of the paired runs")
	assert.Equal(t, notMeasured, rows[1].Verdict, "the chan side of StealContended is missing")
}

// benchLines makes go test output for one benchmark with b.N n and the given ns/op, one line per run.
func benchLines(name string, n int, nsPerOp ...float64) string {
	var b strings.Builder
	for _, v := range nsPerOp {
		fmt.Fprintf(&b, "%s-2  %d  %g ns/op  0 B/op  0 allocs/op\n", name, n, v)
	}
	return b.String()
}

func TestRowWithinNoiseWhenRangeIncludesOne(t *testing.T) {
	out := benchLines("BenchmarkLocalPushPop/wsqueue", 1000, 10, 10, 10, 10, 10) +
		benchLines("BenchmarkLocalPushPop/chan", 1000, 12, 9, 11, 13, 9.5)
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	r := buildRows(sampleComparisons[:1], rs)[0]
	assert.Equal(t, withinNoise, r.Verdict)
	assert.InDelta(t, 1.1, r.Ratio, 1e-9)
	assert.InDelta(t, 0.9, r.Lo, 1e-9)
	assert.InDelta(t, 1.3, r.Hi, 1e-9)
	var text bytes.Buffer
	require.NoError(t, writeTable(&text, nil, []row{r}))
	assert.Contains(t, text.String(), "within noise")
	assert.Contains(t, text.String(), "0.90-1.30x")

	// The same medians with every run on one side of 1x claim a direction.
	out = benchLines("BenchmarkLocalPushPop/wsqueue", 1000, 10, 10, 10, 10, 10) +
		benchLines("BenchmarkLocalPushPop/chan", 1000, 9, 8, 9.5, 7, 9.9)
	rs, err = parseBench(strings.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, slower, buildRows(sampleComparisons[:1], rs)[0].Verdict)
}

// TestRowBelowFloorIsUnreliable: a run whose b.N is below the floor does not count; a row whose runs
// mostly are is unreliable, says why, and has no bar.
func TestRowBelowFloorIsUnreliable(t *testing.T) {
	fileRead := comparison{".", "BenchmarkFileRead", "uring", "osFileGoroutines", "4 KiB read", ""}
	require.Equal(t, 100_000, shapeOf(fileRead).MinN)
	out := benchLines("BenchmarkFileRead/uring", 1, 5e8) + benchLines("BenchmarkFileRead/uring", 100_000, 1000, 1000) +
		benchLines("BenchmarkFileRead/osFileGoroutines", 100_000, 600, 600, 600)
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows := buildRows([]comparison{fileRead}, rs)
	r := rows[0]
	// 2 of 3 runs count: a majority, so the row stands, on those two.
	assert.Equal(t, slower, r.Verdict)
	assert.Equal(t, 1, r.LowN)
	assert.Equal(t, 2, r.Kept)
	assert.Equal(t, 3, r.Runs)
	assert.InDelta(t, 0.6, r.Ratio, 1e-9)
	out = benchLines("BenchmarkFileRead/uring", 1, 5e8, 5e8) + benchLines("BenchmarkFileRead/uring", 100_000, 1000) +
		benchLines("BenchmarkFileRead/osFileGoroutines", 100_000, 600, 600, 600)
	rs, err = parseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows = buildRows([]comparison{fileRead}, rs)
	r = rows[0]
	require.Equal(t, unreliable, r.Verdict, "one run of three at the floor")
	var text, svg bytes.Buffer
	require.NoError(t, writeTable(&text, nil, rows))
	assert.Contains(t, text.String(), "unreliable: b.N 1 < 100000")
	require.NoError(t, writeSVG(&svg, "t", "", rows))
	assert.NotContains(t, svg.String(), "FileRead")
	assert.Contains(t, svg.String(), "1 rows left off")
}

// TestFloorKeepsTheRunsAtOrAboveIt: with a minority of runs below the floor, the row stands on the
// others and says how many counted.
func TestFloorKeepsTheRunsAtOrAboveIt(t *testing.T) {
	out := benchLines("BenchmarkLocalPushPop/wsqueue", 10, 1) + benchLines("BenchmarkLocalPushPop/wsqueue", 1000, 10, 10, 10, 10) +
		benchLines("BenchmarkLocalPushPop/chan", 1000, 1, 20, 30, 40, 50)
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	r := buildRows(sampleComparisons[:1], rs)[0]
	assert.Equal(t, faster, r.Verdict)
	assert.Equal(t, 4, r.Kept)
	assert.Equal(t, 5, r.Runs)
	assert.InDelta(t, 3.5, r.Ratio, 1e-9)
	assert.InDelta(t, 2.0, r.Lo, 1e-9, "the b.N=10 run (ratio 1) does not count")
	assert.Equal(t, "4/5", r.cells().runs)
}

// TestAllocsArePerUnit: allocations are compared per unit of the metric, so a batch benchmark's op
// (10^6 yields) does not show its total.
func TestAllocsArePerUnit(t *testing.T) {
	v, ok := allocsPerUnit(result{Metrics: map[string]float64{"ns/op": 40e6, "ns/yield": 40, "allocs/op": 2000}}, "ns/yield")
	require.True(t, ok)
	assert.InDelta(t, 0.002, v, 1e-12)
	v, ok = allocsPerUnit(result{Metrics: map[string]float64{"ns/op": 5, "allocs/op": 1}}, "ns/op")
	require.True(t, ok)
	assert.Equal(t, 1.0, v)
	_, ok = allocsPerUnit(result{Metrics: map[string]float64{"ns/op": 1e9, "bytes/task": 176, "allocs/op": 3e6}}, "bytes/task")
	assert.False(t, ok, "an op's tasks are not in the output")
	_, ok = allocsPerUnit(result{Metrics: map[string]float64{"ns/op": 5}}, "ns/op")
	assert.False(t, ok, "no -benchmem")

	out := "BenchmarkYieldMany/blitz-2  4  40000000 ns/op  40.0 ns/yield  100 B/op  2026 allocs/op\n" +
		"BenchmarkYieldMany/goroutines-2  2  200000000 ns/op  200.0 ns/yield  100 B/op  1001 allocs/op\n"
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows := buildRows([]comparison{{".", "BenchmarkYieldMany", "blitz", "goroutines", "yield", "ns/yield"}}, rs)
	var text bytes.Buffer
	require.NoError(t, writeTable(&text, nil, rows))
	assert.Contains(t, text.String(), "0.002")
	assert.Contains(t, text.String(), "0.001")
	assert.NotContains(t, text.String(), "2026")
	assert.Equal(t, "0", allocNum(0))
	assert.Equal(t, "1", allocNum(1))
	assert.Equal(t, "2.5", allocNum(2.5))
}

func TestTablesNameEveryComparison(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	rows := buildRows(sampleComparisons, rs)
	var text, md bytes.Buffer
	header := []string{"blitzbench: Some CPU", "WARNING: busy"}
	require.NoError(t, writeTable(&text, header, rows))
	writeMarkdown(&md, header, rows)
	assert.True(t, strings.HasPrefix(text.String(), "blitzbench: Some CPU\nWARNING: busy\n"), "the header comes first")
	assert.Contains(t, text.String(), "LocalPushPop: wsqueue vs chan")
	assert.Contains(t, text.String(), "5.67x")
	assert.Contains(t, text.String(), "5.33-6.00x")
	assert.Contains(t, text.String(), "not measured")
	assert.Contains(t, md.String(), "WARNING: busy")
	assert.Contains(t, md.String(), "| `BenchmarkLocalPushPop` (ns per push+pop) | wsqueue | chan | 11.0 | 62.0 |  | **5.67x** | 5.33-6.00x | 2 | faster | 0 | 0 |")
}

func TestSVGIsWellFormedWithOneBarPerChartedRow(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, writeSVG(&buf, "title <&>", "busy & loaded", buildRows(sampleComparisons, rs)))
	dec := xml.NewDecoder(&buf)
	bars := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG must be well-formed XML")
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			bars++
		}
	}
	assert.Equal(t, 2, bars, "background plus one bar for the one measured row")
}

// TestSVGAxisIsClampedAndLegible: a 500x and a 0.001x row do not stretch the axis past 0.1x-100x, their
// bars stop at its edges, and the tick labels stay apart.
func TestSVGAxisIsClampedAndLegible(t *testing.T) {
	rows := []row{
		{comparison: sampleComparisons[0], Ratio: 500, Lo: 400, Hi: 600, Kept: 5, Runs: 5, Verdict: faster},
		{comparison: sampleComparisons[1], Ratio: 0.001, Lo: 0.001, Hi: 0.002, Kept: 5, Runs: 5, Verdict: slower},
	}
	lo, hi := axisRange(rows)
	assert.Equal(t, axisMin, lo)
	assert.Equal(t, axisMax, hi)
	ticks := axisTicks(lo, hi)
	assert.Equal(t, []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}, ticks)
	perDecade := barAreaW / (math.Log10(hi) - math.Log10(lo))
	for i := 1; i < len(ticks); i++ {
		gap := perDecade * (math.Log10(ticks[i]) - math.Log10(ticks[i-1]))
		assert.GreaterOrEqual(t, gap, 40.0, "ticks %g and %g", ticks[i-1], ticks[i])
	}
	var buf bytes.Buffer
	require.NoError(t, writeSVG(&buf, "t", "", rows))
	re := regexp.MustCompile(`<rect x="([0-9.]+)" y="\d+" width="([0-9.]+)"`)
	ms := re.FindAllStringSubmatch(buf.String(), -1)
	require.Len(t, ms, 2)
	for _, m := range ms {
		x, _ := strconv.ParseFloat(m[1], 64)
		w, _ := strconv.ParseFloat(m[2], 64)
		assert.GreaterOrEqual(t, x, float64(barAreaLeft)-0.05)
		assert.LessOrEqual(t, x+w, float64(barAreaLeft+barAreaW)+0.05)
	}
	assert.Contains(t, buf.String(), "500x (400-600)", "the value column still tells the true figure")
}

func TestAxisTicksAreOneTwoFiveAndIncludeOne(t *testing.T) {
	assert.Equal(t, []float64{0.5, 1, 2}, axisTicks(0.5, 2))
	assert.Equal(t, []float64{0.2, 0.5, 1, 2, 5, 10, 20}, axisTicks(0.15, 30))
}

func TestSelectComparisonsFilters(t *testing.T) {
	kept, err := selectComparisons(comparisons, "LocalPushPop")
	require.NoError(t, err)
	for _, c := range kept {
		assert.Equal(t, "BenchmarkLocalPushPop", c.Benchmark)
	}
	_, err = selectComparisons(comparisons, "nothing-matches-this")
	assert.Error(t, err)
	_, err = selectComparisons(comparisons, "(")
	assert.Error(t, err)
}

// TestRegistryNamesExistingBenchmarks checks that every registered benchmark function is defined in its
// module, so that renaming one breaks this test rather than the demonstration.
func TestRegistryNamesExistingBenchmarks(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, c := range append(append([]comparison(nil), comparisons...), moreComparisons...) {
		funcs, src := benchmarkFuncs(t, filepath.Join(root, c.Module))
		assert.Contains(t, funcs, c.Benchmark, "module %s", c.Module)
		// Sub-benchmark names may sit in a table outside the function, and a nested name such as
		// "contended4/blitz" is made of one b.Run name per level: look for each in the module's tests.
		for _, sub := range []string{c.Ours, c.Baseline} {
			assert.True(t, hasSubBenchmark(src, sub), "no sub-benchmark %q in %s", sub, c.Module)
		}
	}
}

// hasSubBenchmark reports whether src names the sub-benchmark sub, either whole (b.Run("a/b", ...)) or
// one level at a time (b.Run("a", ...) around b.Run("b", ...)).
func hasSubBenchmark(src, sub string) bool {
	if strings.Contains(src, `"`+sub+`"`) {
		return true
	}
	for _, part := range strings.Split(sub, "/") {
		// A level may also be built: "/hello" trimmed of its slash, or "conns=%d" formatted.
		key, _, isKV := strings.Cut(part, "=")
		if !strings.Contains(src, `"`+part+`"`) && !strings.Contains(src, `"/`+part+`"`) &&
			!(isKV && strings.Contains(src, key+"=%d")) {
			return false
		}
	}
	return true
}

// TestShapesNameRegisteredBenchmarks: a shape whose benchmark is not registered (renamed, or a typo in
// its key) would silently leave that benchmark at the defaults.
func TestShapesNameRegisteredBenchmarks(t *testing.T) {
	registered := make(map[string]bool)
	for _, c := range append(append([]comparison(nil), comparisons...), moreComparisons...) {
		registered[moduleName(c.Module)+"."+c.Benchmark] = true
	}
	for key, s := range shapes {
		assert.True(t, registered[key], "shape %q names no comparison", key)
		assert.GreaterOrEqual(t, s.MinN, 1, key)
		if n, ok := strings.CutSuffix(s.Benchtime, "x"); ok {
			iters, err := strconv.Atoi(n)
			require.NoError(t, err, key)
			assert.GreaterOrEqual(t, iters, s.MinN, "%s: a fixed run of %d iterations is below its own floor", key, iters)
		}
	}
}

// benchmarkFuncs returns the Benchmark functions of a module's top-level package and the text of its
// test files.
func benchmarkFuncs(t *testing.T, dir string) (funcs map[string]bool, src string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	funcs = make(map[string]bool)
	var all strings.Builder
	for _, path := range files {
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		all.Write(text)
		f, err := parser.ParseFile(fset, path, text, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Benchmark") {
				funcs[fn.Name.Name] = true
			}
		}
	}
	return funcs, all.String()
}

// TestMarkdownCarriesTokioFigure: a runtime row whose shape Tokio's benchmarks share shows Tokio's
// figure in its own column; the others leave it empty.
func TestMarkdownCarriesTokioFigure(t *testing.T) {
	out := "BenchmarkChainedSpawn/blitz/auto-2  1  200000 ns/op  200.0 ns/spawn\n" +
		"BenchmarkChainedSpawn/goroutines-2  1  300000 ns/op  300.0 ns/spawn\n"
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows := buildRows([]comparison{{".", "BenchmarkChainedSpawn", "blitz/auto", "goroutines", "spawn", "ns/spawn"}}, rs)
	var md strings.Builder
	writeMarkdown(&md, nil, rows)
	assert.Contains(t, md.String(), "| blitz/auto | goroutines | 200 | 300 | "+num(tokioFigures["BenchmarkChainedSpawn/blitz/auto"])+" | **1.50x** |")
}
