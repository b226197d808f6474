package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// An invocation is one run of a module's test binary: the benchmarks of that module that share a
// -benchtime, each once, with a -bench pattern that names exactly the sub-benchmarks the comparisons
// read (the other sub-benchmarks of those functions do not run).
type invocation struct {
	Module    string
	Benchtime string
	Pattern   string
	Benches   []string // the benchmark functions, for the progress line
}

// plan returns the invocations of run number run (0-based) for cs: per module in first-seen order, one
// per -benchtime (the run's, then each fixed one a shape sets), leaving out the benchmarks whose
// shape caps their runs below run+1.
func plan(cs []comparison, benchtime string, run int) []invocation {
	type key struct{ module, benchtime string }
	var keys []key
	leaves := make(map[key]map[string][]string) // benchmark -> sub-benchmarks
	benches := make(map[key][]string)
	for _, c := range cs {
		s := shapeOf(c)
		if s.MaxRuns > 0 && run >= s.MaxRuns {
			continue
		}
		k := key{c.Module, cmp.Or(s.Benchtime, benchtime)}
		if _, ok := leaves[k]; !ok {
			keys = append(keys, k)
			leaves[k] = make(map[string][]string)
		}
		if _, ok := leaves[k][c.Benchmark]; !ok {
			benches[k] = append(benches[k], c.Benchmark)
		}
		for _, sub := range []string{c.Ours, c.Baseline} {
			if !slices.Contains(leaves[k][c.Benchmark], sub) {
				leaves[k][c.Benchmark] = append(leaves[k][c.Benchmark], sub)
			}
		}
	}
	// One module's invocations stay together, in first-seen order, the run's benchtime first.
	var mods []string
	for _, k := range keys {
		if !slices.Contains(mods, k.module) {
			mods = append(mods, k.module)
		}
	}
	ordered := make([]key, 0, len(keys))
	for _, m := range mods {
		for _, fixed := range []bool{false, true} {
			for _, k := range keys {
				if k.module == m && (k.benchtime != benchtime) == fixed {
					ordered = append(ordered, k)
				}
			}
		}
	}
	keys = ordered
	invs := make([]invocation, 0, len(keys))
	for _, k := range keys {
		invs = append(invs, invocation{Module: k.module, Benchtime: k.benchtime,
			Pattern: benchPattern(benches[k], leaves[k]), Benches: benches[k]})
	}
	return invs
}

// benchPattern returns a -bench pattern matching exactly the given sub-benchmarks of each benchmark:
// one alternative per sub-benchmark, "^BenchmarkX$/^a$/^b$" for "a/b". go test splits a pattern at its
// top-level '|' into alternatives and each alternative at '/' into one expression per level. The
// shallower alternatives come first: go test takes the first alternative that matches a name, and a
// deeper one matches a shorter name only partially, which would make it wait for sub-benchmarks that a
// leaf does not have and not report the leaf.
func benchPattern(benches []string, leaves map[string][]string) string {
	type alt struct {
		depth int
		text  string
	}
	var alts []alt
	for _, bench := range benches {
		for _, sub := range leaves[bench] {
			parts := []string{"^" + regexp.QuoteMeta(bench) + "$"}
			for _, level := range strings.Split(sub, "/") {
				parts = append(parts, "^"+regexp.QuoteMeta(level)+"$")
			}
			alts = append(alts, alt{len(parts), strings.Join(parts, "/")})
		}
	}
	slices.SortStableFunc(alts, func(a, b alt) int { return cmp.Compare(a.depth, b.depth) })
	texts := make([]string, len(alts))
	for i, a := range alts {
		texts[i] = a.text
	}
	return strings.Join(texts, "|")
}

// testBinaries builds the test binary of each module's top-level package into dir, all in one go
// command (it builds them in parallel); if that fails, it builds them one by one, so that one module
// that does not build (another change in progress) costs only its own rows. It returns the binaries
// by module and the modules that failed with their errors.
func testBinaries(root, dir string, mods []string) (map[string]string, map[string]error) {
	bins := make(map[string]string)
	failed := make(map[string]error)
	args := []string{"test", "-c", "-o", dir + string(filepath.Separator)}
	for _, m := range mods {
		args = append(args, "./"+m)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Stderr = root, &stderr
	allOK := cmd.Run() == nil
	for _, m := range mods {
		bin := filepath.Join(dir, moduleName(m)+".test")
		if _, err := os.Stat(bin); err == nil && allOK {
			bins[m] = bin
			continue
		}
		bin = filepath.Join(dir, "one-"+moduleName(m)+".test")
		var out bytes.Buffer
		one := exec.Command("go", "test", "-c", "-o", bin, ".")
		one.Dir, one.Stdout, one.Stderr = filepath.Join(root, m), &out, &out
		if err := one.Run(); err != nil {
			failed[m] = fmt.Errorf("building %s's test binary: %w\n%s", m, err, strings.TrimSpace(out.String()))
			continue
		}
		bins[m] = bin
	}
	return bins, failed
}

// runInvocation runs inv's test binary in its module's directory and returns its output and the CPU
// time it used (with its waited-for children: the load generators some benchmarks start). Its output
// is also copied to verbose, when that is not nil.
func runInvocation(root, bin string, inv invocation, verbose io.Writer) ([]byte, time.Duration, error) {
	var out bytes.Buffer
	cmd := exec.Command(bin, "-test.run=^$", "-test.bench="+inv.Pattern, "-test.benchtime="+inv.Benchtime,
		"-test.benchmem", "-test.count=1", "-test.timeout=10m")
	cmd.Dir = filepath.Join(root, inv.Module)
	var w io.Writer = &out
	if verbose != nil {
		w = io.MultiWriter(&out, verbose)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s", inv.Module, strings.Join(inv.Benches, ","), err, lastLines(out.String(), 15))
	}
	return out.Bytes(), cpu, err
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
