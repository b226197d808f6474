package main

import (
	"bytes"
	"encoding/xml"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
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
	out := "BenchmarkIdle/blitz-2  1  900000 ns/op  184.0 bytes/task\n" +
		"BenchmarkIdle/goroutines-2  1  100000 ns/op  2642 bytes/task\n"
	rs, err := parseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows := buildRows([]comparison{{"runtime", "BenchmarkIdle", "blitz", "goroutines", "idle task", "bytes/task"}}, rs)
	require.True(t, rows[0].Measured)
	assert.InDelta(t, 184.0, rows[0].OursNs, 1e-9)
	assert.InDelta(t, 2642.0/184.0, rows[0].Speedup(), 1e-9)
	var md strings.Builder
	writeMarkdown(&md, rows)
	assert.Contains(t, md.String(), "bytes/task, per idle task")
}

func TestBuildRowsComputesSpeedupFromMedians(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	rows := buildRows(sampleComparisons, rs)
	require.Len(t, rows, 2)
	assert.True(t, rows[0].Measured)
	assert.InDelta(t, 62.0/12.0, rows[0].Speedup(), 1e-9)
	assert.False(t, rows[1].Measured, "the chan side of StealContended is missing")
}

func TestTablesNameEveryComparison(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	rows := buildRows(sampleComparisons, rs)
	var text, md bytes.Buffer
	require.NoError(t, writeTable(&text, rows))
	writeMarkdown(&md, rows)
	assert.Contains(t, text.String(), "LocalPushPop: wsqueue vs chan")
	assert.Contains(t, text.String(), "5.17x")
	assert.Contains(t, text.String(), "not measured")
	assert.Contains(t, md.String(), "| `BenchmarkLocalPushPop` (ns per push+pop) | wsqueue | chan | 12.0 | 62.0 |  | **5.17x** | 0.00 | 0.00 |")
}

func TestSVGIsWellFormedWithOneBarPerMeasuredRow(t *testing.T) {
	rs, err := parseBench(strings.NewReader(sampleOutput))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, writeSVG(&buf, "title <&>", buildRows(sampleComparisons, rs)))
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
	for _, c := range comparisons {
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
		if !strings.Contains(src, `"`+part+`"`) {
			return false
		}
	}
	return true
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
	rows := buildRows([]comparison{{"runtime", "BenchmarkChainedSpawn", "blitz/auto", "goroutines", "spawn", "ns/spawn"}}, rs)
	var md strings.Builder
	writeMarkdown(&md, rows)
	assert.Contains(t, md.String(), "| blitz/auto | goroutines | 200 | 300 | "+num(tokioFigures["BenchmarkChainedSpawn/blitz/auto"])+" | **1.50x** |")
}
