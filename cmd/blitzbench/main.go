// Command blitzbench is blitz's main demonstration: it runs the side-by-side benchmarks of every module
// (ours against the goroutine, channel, mutex or time equivalent), prints a table of the speedups with
// their spread and writes an SVG bar chart.
//
// Usage, from anywhere in the repository:
//
//	go run ./cmd/blitzbench                 # about 1.5-2 min on an idle 2-core machine
//	go run ./cmd/blitzbench -all            # also the epoll backend and other variants
//	go run ./cmd/blitzbench -benchtime=1s -count=6 -md table.md
//	go run ./cmd/blitzbench -from bench.txt # chart and table from `go tool mage bench` output
//
// # Runs
//
// Each module's test binary is built once. The benchmarks then run -count times over: each run goes
// through every module once, so run i of our side and run i of the baseline are made one after the
// other, seconds apart, and a machine that gets busier shifts both. The table reports, per comparison,
// the median of the run-by-run ratios and their range, and calls "within noise" a row whose range
// includes 1x. A run whose b.N stayed below the benchmark's floor (its figure is mostly its start-up)
// does not count, and a row without a majority of counted runs is "unreliable" and left off the chart.
// Benchmarks whose setup is heavy or whose op is a whole workload run a fixed number of iterations
// (shapes, in suites.go).
//
// # Load
//
// The header names the processor and the Go version, and on Linux the load: the 1-minute load average
// at the start and the end, and the share of the CPUs that other processes used while the benchmarks
// ran (from /proc/stat, less the benchmarks' own CPU time). It warns when the machine was busy.
package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

type options struct {
	benchtime string
	count     int
	svgPath   string
	mdPath    string
	from      string
	save      string
	filter    string
	all       bool
	verbose   bool
}

func main() {
	var o options
	flag.StringVar(&o.benchtime, "benchtime", "50ms", "-benchtime of each run of a benchmark (the heavy ones run a fixed number of iterations instead)")
	flag.IntVar(&o.count, "count", 5, "runs of each benchmark; the table shows the median ratio and its range")
	flag.StringVar(&o.svgPath, "svg", "blitzbench.svg", "where to write the SVG bar chart (empty: none)")
	flag.StringVar(&o.mdPath, "md", "", "also write the table as Markdown to this file")
	flag.StringVar(&o.from, "from", "", "read `go test -bench` output from this file instead of running")
	flag.StringVar(&o.save, "save", "", "also write the benchmarks' raw output to this file (for -from)")
	flag.StringVar(&o.filter, "run", "", "only comparisons whose label matches this regexp")
	flag.BoolVar(&o.all, "all", false, "also measure the other backends and variants (moreComparisons)")
	flag.BoolVar(&o.verbose, "v", false, "stream the benchmarks' output")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "blitzbench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.count < 1 {
		return errors.New("-count must be at least 1")
	}
	all := comparisons
	if o.all {
		all = append(append([]comparison(nil), comparisons...), moreComparisons...)
	}
	cs, err := selectComparisons(all, o.filter)
	if err != nil {
		return err
	}
	var (
		rs       *results
		header   []string
		warnings []string
		runErrs  []error
	)
	if o.from != "" {
		data, err := os.ReadFile(o.from)
		if err != nil {
			return err
		}
		if rs, err = parseBench(bytes.NewReader(data)); err != nil {
			return err
		}
		header = []string{fmt.Sprintf("blitzbench: from %s (cpu: %s)", o.from, cmp.Or(rs.cpu, "unknown"))}
	} else {
		var lr loadReport
		var raw []byte
		rs, raw, lr, runErrs, err = measure(o, cs)
		if err != nil {
			return err
		}
		if o.save != "" {
			if err := os.WriteFile(o.save, raw, 0o644); err != nil {
				return err
			}
		}
		header = []string{
			fmt.Sprintf("blitzbench: %s", machine(cpuModel(), runtime.NumCPU(), goVersion())),
			fmt.Sprintf("%d runs of each comparison (memory rows: at most 3), -benchtime=%s (heavy benchmarks: a fixed number of iterations); the runs took %s",
				o.count, o.benchtime, lr.Wall.Round(time.Second)),
			lr.summary(),
		}
		warnings = lr.warnings()
		for _, w := range warnings {
			header = append(header, "WARNING: "+w+"; expect wide ranges and rows within noise")
		}
	}
	rows := buildRows(cs, rs)
	fmt.Println()
	if err := writeTable(os.Stdout, header, rows); err != nil {
		return err
	}
	if o.mdPath != "" {
		if err := writeFile(o.mdPath, func(w io.Writer) error { writeMarkdown(w, header, rows); return nil }); err != nil {
			return err
		}
		fmt.Println("\nwrote", o.mdPath)
	}
	if o.svgPath != "" {
		title := "blitz for Go: side-by-side benchmarks"
		if o.from == "" {
			title += " (" + machine(cpuModel(), runtime.NumCPU(), goVersion()) + ")"
		}
		note := ""
		if len(warnings) > 0 {
			note = "measured on a busy machine: " + warnings[0]
		}
		if err := writeFile(o.svgPath, func(w io.Writer) error { return writeSVG(w, title, note, rows) }); err != nil {
			return err
		}
		fmt.Println("wrote", o.svgPath)
	}
	for _, err := range runErrs {
		fmt.Fprintln(os.Stderr, "blitzbench:", err)
	}
	var missing []string
	for _, r := range rows {
		if !r.Measured() {
			missing = append(missing, r.Label())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no result for %s: did a benchmark fail or get renamed?", strings.Join(missing, "; "))
	}
	if len(runErrs) > 0 {
		return errors.New("some benchmark runs failed (above)")
	}
	return nil
}

// measure builds the test binaries of cs's modules and makes o.count runs (see "Runs"). It returns the
// results by run, the raw output, the load around the benchmarks, and the errors of the invocations
// that failed (their rows may still have the other runs).
func measure(o options, cs []comparison) (*results, []byte, loadReport, []error, error) {
	lr := loadReport{CPUs: runtime.NumCPU(), Start: readLoad()}
	if ws := lr.warnings(); len(ws) > 0 {
		fmt.Fprintf(os.Stderr, "blitzbench: WARNING: %s; the figures will be noisy\n", ws[0])
	}
	root, err := repoRoot()
	if err != nil {
		return nil, nil, lr, nil, err
	}
	dir, err := os.MkdirTemp("", "blitzbench")
	if err != nil {
		return nil, nil, lr, nil, err
	}
	defer os.RemoveAll(dir)
	mods := modulesOf(cs)
	start := time.Now()
	fmt.Fprintf(os.Stderr, "building the test binaries of %s ...\n", strings.Join(mods, ", "))
	bins, failed := testBinaries(root, dir, mods)
	fmt.Fprintf(os.Stderr, "  done in %s\n", time.Since(start).Round(100*time.Millisecond))
	var errs []error
	for _, m := range mods {
		if err := failed[m]; err != nil {
			errs = append(errs, err)
		}
	}
	var verbose io.Writer
	if o.verbose {
		verbose = os.Stderr
	}
	rs := newResults()
	var raw bytes.Buffer
	lr.BenchStart = readLoad()
	benchStart := time.Now()
	for run := range o.count {
		runStart := time.Now()
		fmt.Fprintf(os.Stderr, "run %d/%d", run+1, o.count)
		// Each module's time, its invocations summed: where the run's time goes.
		var took []string
		prev, modStart := "", time.Now()
		flush := func() {
			if prev != "" {
				took = append(took, fmt.Sprintf("%s %.1fs", prev, time.Since(modStart).Seconds()))
			}
		}
		for _, inv := range plan(cs, o.benchtime, run) {
			bin, ok := bins[inv.Module]
			if !ok {
				continue
			}
			if inv.Module != prev {
				flush()
				prev, modStart = inv.Module, time.Now()
			}
			out, cpu, err := runInvocation(root, bin, inv, verbose)
			lr.OwnCPU += cpu
			raw.Write(out)
			if err != nil {
				errs = append(errs, fmt.Errorf("run %d: %w", run+1, err))
			}
			one, perr := parseBench(bytes.NewReader(out))
			if perr != nil {
				return nil, nil, lr, nil, perr
			}
			rs.addRun(one, run)
		}
		flush()
		fmt.Fprintf(os.Stderr, " in %s: %s\n", time.Since(runStart).Round(100*time.Millisecond), strings.Join(took, ", "))
	}
	lr.Wall = time.Since(benchStart)
	lr.End = readLoad()
	return rs, raw.Bytes(), lr, errs, nil
}

// selectComparisons keeps the comparisons whose label matches filter.
func selectComparisons(cs []comparison, filter string) ([]comparison, error) {
	if filter == "" {
		return cs, nil
	}
	re, err := regexp.Compile(filter)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	var kept []comparison
	for _, c := range cs {
		if re.MatchString(row{comparison: c}.Label()) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("-run %q matches no comparison", filter)
	}
	return kept, nil
}

// repoRoot finds the directory holding go.work, walking up from the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the blitz repository (no go.work above the working directory)")
		}
		dir = parent
	}
}

// goVersion is the version of the go command that builds the benchmarks (the toolchain go.work
// selects), or this program's own when that cannot be asked.
var goVersion = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return runtime.Version()
})

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
