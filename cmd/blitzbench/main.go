// Command blitzbench is blitz's main demonstration: it runs the side-by-side benchmarks of every module
// (ours against the goroutine, channel, mutex or time equivalent, in the same `go test -bench` run so
// the ratio holds on a noisy machine), prints a table of the speedups and writes an SVG bar chart.
//
// Usage, from anywhere in the repository:
//
//	go run ./cmd/blitzbench                 # quick mode, about 1.5 min on an idle machine
//	go run ./cmd/blitzbench -benchtime=1s -count=6 -md table.md
//	go run ./cmd/blitzbench -from bench.txt # chart and table from `go tool mage bench` output
package main

import (
	"bytes"
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
	"time"
)

type options struct {
	benchtime string
	count     int
	svgPath   string
	mdPath    string
	from      string
	filter    string
	verbose   bool
}

func main() {
	var o options
	flag.StringVar(&o.benchtime, "benchtime", "150ms", "go test -benchtime for each benchmark (quick by default)")
	flag.IntVar(&o.count, "count", 2, "go test -count: runs of each benchmark; the table shows medians")
	flag.StringVar(&o.svgPath, "svg", "blitzbench.svg", "where to write the SVG bar chart (empty: none)")
	flag.StringVar(&o.mdPath, "md", "", "also write the table as Markdown to this file")
	flag.StringVar(&o.from, "from", "", "read `go test -bench` output from this file instead of running")
	flag.StringVar(&o.filter, "run", "", "only comparisons whose label matches this regexp")
	flag.BoolVar(&o.verbose, "v", false, "stream go test's output")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "blitzbench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	cs, err := selectComparisons(comparisons, o.filter)
	if err != nil {
		return err
	}
	out, err := benchOutput(o, cs)
	if err != nil {
		return err
	}
	rs, err := parseBench(bytes.NewReader(out))
	if err != nil {
		return err
	}
	rows := buildRows(cs, rs)
	fmt.Printf("\n%s\n\n", machine())
	if err := writeTable(os.Stdout, rows); err != nil {
		return err
	}
	if o.mdPath != "" {
		if err := writeFile(o.mdPath, func(w io.Writer) error { writeMarkdown(w, rows); return nil }); err != nil {
			return err
		}
		fmt.Println("\nwrote", o.mdPath)
	}
	if o.svgPath != "" {
		title := "blitz for Go: side-by-side benchmarks (" + machine() + ")"
		if err := writeFile(o.svgPath, func(w io.Writer) error { return writeSVG(w, title, rows) }); err != nil {
			return err
		}
		fmt.Println("wrote", o.svgPath)
	}
	for _, r := range rows {
		if !r.Measured {
			return fmt.Errorf("%s: no result for one side; did a benchmark get renamed?", r.Label())
		}
	}
	return nil
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

// benchOutput returns `go test -bench` output for cs: read from -from, or produced by running each
// module's benchmarks.
func benchOutput(o options, cs []comparison) ([]byte, error) {
	if o.from != "" {
		return os.ReadFile(o.from)
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	var all bytes.Buffer
	mods, benches := modulesOf(cs)
	for _, mod := range mods {
		pattern := "^(" + strings.Join(benches[mod], "|") + ")$"
		fmt.Fprintf(os.Stderr, "running %s benchmarks %s ...\n", mod, strings.Join(benches[mod], ", "))
		start := time.Now()
		cmd := exec.Command("go", "test", "-run=^$", "-bench="+pattern, "-benchmem",
			"-benchtime="+o.benchtime, fmt.Sprintf("-count=%d", o.count), "./...")
		cmd.Dir = filepath.Join(root, mod)
		cmd.Stderr = os.Stderr
		var w io.Writer = &all
		if o.verbose {
			w = io.MultiWriter(&all, os.Stderr)
		}
		cmd.Stdout = w
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("benchmarks of %s: %w", mod, err)
		}
		fmt.Fprintf(os.Stderr, "  done in %s\n", time.Since(start).Round(100*time.Millisecond))
	}
	return all.Bytes(), nil
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

// machine describes where the figures were measured.
func machine() string {
	return fmt.Sprintf("%s, %d CPUs, %s %s/%s", cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// cpuModel reads the CPU's name from /proc/cpuinfo where there is one.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}

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
