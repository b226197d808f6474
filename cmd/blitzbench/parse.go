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
	N       int                // iterations
	Metrics map[string]float64 // unit -> value: "ns/op", "B/op", "allocs/op", custom units
}

// results groups every measured line by benchmark name, in the order the names first appeared.
type results struct {
	order  []string
	byName map[string][]result
}

// procsSuffix is the "-N" that go test appends to a benchmark name when GOMAXPROCS > 1.
var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads `go test -bench` output (also benchstat input files) and keeps the benchmark lines;
// everything else (goos:, pkg:, PASS, logs) is skipped.
func parseBench(r io.Reader) (*results, error) {
	rs := &results{byName: make(map[string][]result)}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		res, ok := parseLine(sc.Text())
		if !ok {
			continue
		}
		if _, seen := rs.byName[res.Name]; !seen {
			rs.order = append(rs.order, res.Name)
		}
		rs.byName[res.Name] = append(rs.byName[res.Name], res)
	}
	return rs, sc.Err()
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

// median returns the median of a metric over every run of a benchmark, and whether it was measured.
func (rs *results) median(name, unit string) (float64, bool) {
	var vs []float64
	for _, r := range rs.byName[name] {
		if v, ok := r.Metrics[unit]; ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}
