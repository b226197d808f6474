package main

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// result is one line of `go test -bench` output.
type result struct {
	Name    string             // full name without the -GOMAXPROCS suffix, e.g. "BenchmarkX/chan"
	Pkg     string             // import path from the last "pkg:" line before it; "" if none
	Run     int                // which run of the benchmark this is, 0-based (see parseBench)
	N       int                // iterations
	Metrics map[string]float64 // unit -> value: "ns/op", "B/op", "allocs/op", custom units
}

// results groups every measured line by benchmark name, in the order the names first appeared.
type results struct {
	order  []string
	byName map[string][]result
	cpu    string // the "cpu:" line of the output, if any
}

func newResults() *results { return &results{byName: make(map[string][]result)} }

// procsSuffix is the "-N" that go test appends to a benchmark name when GOMAXPROCS > 1.
var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads `go test -bench` output (also benchstat input files) and keeps the benchmark lines;
// everything else (goos:, PASS, logs) is skipped. The k-th line of a benchmark in a package is its run
// k-1, so that the runs of two sub-benchmarks pair up in the order they were made.
func parseBench(r io.Reader) (*results, error) {
	rs := newResults()
	seen := make(map[string]int) // pkg + name -> lines so far
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if c, ok := strings.CutPrefix(line, "cpu: "); ok && rs.cpu == "" {
			rs.cpu = strings.TrimSpace(c)
			continue
		}
		res, ok := parseLine(line)
		if !ok {
			continue
		}
		res.Pkg = pkg
		key := pkg + "\x00" + res.Name
		res.Run = seen[key]
		seen[key]++
		rs.add(res)
	}
	return rs, sc.Err()
}

// add records res.
func (rs *results) add(res result) {
	if _, seen := rs.byName[res.Name]; !seen {
		rs.order = append(rs.order, res.Name)
	}
	rs.byName[res.Name] = append(rs.byName[res.Name], res)
}

// addRun records every result of other as made in run number run: other is the output of one
// invocation of a test binary, in which each benchmark ran once.
func (rs *results) addRun(other *results, run int) {
	if rs.cpu == "" {
		rs.cpu = other.cpu
	}
	for _, name := range other.order {
		for _, res := range other.byName[name] {
			res.Run = run
			rs.add(res)
		}
	}
}

// parseLine parses "BenchmarkName-2  1000  12.5 ns/op  0 B/op  0 allocs/op".
func parseLine(line string) (result, bool) {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || len(fields)%2 != 0 {
		return result{}, false
	}
	n, err := strconv.Atoi(fields[1])
	if err != nil {
		return result{}, false
	}
	res := result{Name: procsSuffix.ReplaceAllString(fields[0], ""), N: n, Metrics: make(map[string]float64)}
	for i := 2; i+1 < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return result{}, false
		}
		res.Metrics[fields[i+1]] = v
	}
	_, hasNs := res.Metrics["ns/op"]
	return res, hasNs
}

// runsOf returns the results of the benchmark name that belong to module (their package is the
// module's top-level package, or unknown), by run.
func (rs *results) runsOf(module, name string) map[int]result {
	runs := make(map[int]result)
	for _, r := range rs.byName[name] {
		if inModule(r.Pkg, module) {
			runs[r.Run] = r
		}
	}
	return runs
}

// median returns the median of a metric over every run of a benchmark, and whether it was measured.
func (rs *results) median(name, unit string) (float64, bool) {
	var vs []float64
	for _, r := range rs.byName[name] {
		if v, ok := r.Metrics[unit]; ok {
			vs = append(vs, v)
		}
	}
	return medianOf(vs)
}

// medianOf returns the median of vs, and false if vs is empty.
func medianOf(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}

// rootPackage is the import path of the root module's package, whose
// module directory is ".".
const rootPackage = "github.com/blitz-go/blitz"

// inModule reports whether the benchmark output's package pkg ("" when the
// output named none) is the package of the module in directory module.
func inModule(pkg, module string) bool {
	switch {
	case pkg == "":
		return true
	case module == ".":
		return pkg == rootPackage
	}
	return pkg == module || strings.HasSuffix(pkg, "/"+module)
}
