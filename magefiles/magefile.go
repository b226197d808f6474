// The build of blitz for Go: `go tool mage -l` lists the targets. Every target walks the modules in go.work.
package main

// Environment knobs:
//
//	BLITZ_RACE=0          test without -race even where the platform supports it
//	BENCHTIME, COUNT      benchmark time and repetitions for `bench` (default 1s, 6) and `ratios`
//	                      (default 300x, 8)
//	BENCH_OUT             file that `bench` writes (default bench.txt)
//	FUZZTIME              time per fuzz target for `fuzz` (default 30s), and for `fuzzHTTP` (default 10m;
//	                      CI's `fuzzHTTPShort` fuzzes for 15s)
//	BLITZ_INSTALL_WINE=1  let `windows` install Wine and mingw from Debian's packages when absent
//	BLITZ_INSTALL_CHROMIUM=1  let `test` install Chromium and curl from Debian's packages when absent, and
//	                      make the browser test fail instead of skipping when it cannot find Chromium
//	BLITZ_LOAD            busy loops that `loaded` runs beside the tests (default 2)
//	PEERS_LOAD            the HTTP load of `peers`: wrk (default, installed from Debian's packages when
//	                      absent) or go (peerbench's own client)
//
// Mage itself comes from the root module's `tool` directive and the linters run with `go run
// pkg@version`, so nothing needs installing beyond Go.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/magefile/mage/mg"
)

// Pinned versions of the tools that `lint` runs with `go run pkg@version` (nothing is installed).
const (
	staticcheckPkg = "honnef.co/go/tools/cmd/staticcheck@v0.8.2"
	actionlintPkg  = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"
	benchstatPkg   = "golang.org/x/perf/cmd/benchstat@latest"
)

// toolEnv is the environment of the tools run with `go run pkg@version`: they may need a newer Go than the
// oldest the modules support (staticcheck v0.8.2 needs Go 1.26), so the go command may fetch the toolchain
// a tool asks for even where GOTOOLCHAIN=local pins the one that builds and tests our code.
var toolEnv = []string{"GOTOOLCHAIN=auto"}

// oldestGo is the oldest Go release the modules support (the go line of go.work and of every go.mod) at
// its newest patch release; `oldest` tests with it.
const oldestGo = "go1.25.14"

// crossTargets are the platforms the modules must build and vet for: every module for the four systems
// the project supports (all), the modules users install (versions.txt's public ones) for the other
// architectures and the systems of the poll(2) backend.
var crossTargets = []struct {
	goos, goarch string
	all          bool
}{
	{"linux", "amd64", true}, {"darwin", "arm64", true}, {"freebsd", "amd64", true}, {"windows", "amd64", true},
	{"linux", "arm64", false}, {"linux", "386", false},
	{"illumos", "amd64", false}, {"solaris", "amd64", false}, {"aix", "ppc64", false},
}

// Test runs every module's tests at their full sizes, with -race where the platform supports it.
func Test() error { return testRace(false) }

// Race runs every module's tests at their -short sizes, with -race where the platform supports it: the
// test step of CI, which the full sizes (Test) would take past its time budget on a 2-core machine.
func Race() error { return testRace(true) }

func testRace(short bool) error {
	if err := ensureChromium(); err != nil {
		return err
	}
	args := []string{"test"}
	if raceSupported() {
		args = append(args, "-race")
	}
	if short {
		args = append(args, "-short")
	}
	pats, err := workspacePatterns()
	if err != nil {
		return err
	}
	// One go command for every module: it builds and runs the packages of all of them two at a time,
	// where a command per module would wait for each module's slowest package before starting the next.
	args = append(args, "-timeout", "15m")
	return goIn(".", nil, append(args, pats...)...)
}

// Short runs every module's tests with -short and without -race: the quick loop while editing.
func Short() error {
	return forEachModule(func(mod string) error { return goIn(mod, nil, "test", "-short", "./...") })
}

// Oldest checks the modules users install (versions.txt's public ones) with the oldest Go they claim to
// support, fetched from the module proxy as a toolchain and never upgraded: each is vetted on its own
// (GOWORK=off), so that a use of a newer API, a dependency that raises the go line or a missing
// requirement fails here, and then their short tests run with that Go, in one go command over the
// workspace. (The examples, the test suites and the peers are vetted and tested with the newer Go in Vet
// and Race.)
//
// Vetting from source, as Vet does for the other platforms, is slower here: 382 s against 331 s for the
// whole step from a cold cache, because each module's load type-checks the standard library again, where
// go vet's compiled packages are shared by the modules and by the tests after them.
func Oldest() error {
	out, err := exec.Command(mg.GoCmd(), "work", "edit", "-json").Output()
	if err != nil {
		return fmt.Errorf("reading go.work: %w", err)
	}
	var work struct{ Go string }
	if err := json.Unmarshal(out, &work); err != nil {
		return err
	}
	if want := "go" + work.Go; !strings.HasPrefix(oldestGo+".", strings.TrimSuffix(want, ".0")+".") {
		return fmt.Errorf("go.work says go %s but oldestGo is %s: make them the same release", work.Go, oldestGo)
	}
	toolchain := "GOTOOLCHAIN=" + oldestGo
	v, err := readVersions()
	if err != nil {
		return err
	}
	for _, mod := range v.Public {
		if err := goIn(mod, []string{toolchain, "GOWORK=off"}, "vet", "./..."); err != nil {
			return fmt.Errorf("module %s: %w", mod, err)
		}
	}
	pats, err := libraryPatterns()
	if err != nil {
		return err
	}
	return goIn(".", []string{toolchain}, append([]string{"test", "-short", "-count=1", "-timeout", "15m"}, pats...)...)
}

// Loaded runs Test with BLITZ_LOAD (default 2) busy loops burning CPU beside it, the way a shared CI
// machine does: a test that passes alone and fails here depends on a quiet machine, which no test may.
func Loaded() error {
	n := 2
	if v := os.Getenv("BLITZ_LOAD"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 0 {
			return fmt.Errorf("BLITZ_LOAD=%q: want a count of busy loops", v)
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			runtime.LockOSThread() // one OS thread each, as a separate busy process would be
			for spins := 0; ; spins++ {
				if spins%(1<<20) == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
			}
		}()
	}
	defer func() {
		close(stop)
		for range n {
			<-done
		}
	}()
	fmt.Printf("loaded: %d busy loops beside the tests\n", n)
	// A cached pass proves nothing about this run's load.
	os.Setenv("GOFLAGS", strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1"))
	return Test()
}

// Standalone runs every module's short tests on its own, outside the workspace (GOWORK=off), so that a
// missing `replace ../sibling` or a go.sum gap shows up here and not in a user's build.
func Standalone() error {
	env := []string{"GOWORK=off"}
	return forEachModule(func(mod string) error {
		return goIn(mod, env, "test", "-short", "-count=1", "./...")
	})
}

// Vet runs go vet on every module for the host, and go vet's analyzers from source (vetFromSource) on
// every module for darwin, freebsd and windows, and on the modules users install for arm64 and 32-bit
// linux (where 64-bit atomics need alignment) and the Unix systems of the poll(2) backend (see
// crossTargets). One load per platform covers the modules, so shared packages load once.
func Vet() error {
	all, err := workspacePatterns()
	if err != nil {
		return err
	}
	lib, err := libraryPatterns()
	if err != nil {
		return err
	}
	if err := goIn(".", nil, append([]string{"vet"}, all...)...); err != nil {
		return err
	}
	for _, t := range crossTargets {
		if t.goos == runtime.GOOS && t.goarch == runtime.GOARCH {
			continue // the host's vet above covered it (no file of the modules depends on cgo)
		}
		pats := lib
		if t.all {
			pats = all
		}
		fmt.Printf("== vet %s/%s from source\n", t.goos, t.goarch)
		env := []string{"GOOS=" + t.goos, "GOARCH=" + t.goarch, "CGO_ENABLED=0"}
		if err := vetFromSource(".", env, pats); err != nil {
			return fmt.Errorf("vet %s/%s: %w", t.goos, t.goarch, err)
		}
	}
	return nil
}

// Lint checks formatting (gofmt), that every module requires its siblings at the version in versions.txt,
// that the deprecated forwarding package at the runtime's old path is current (see Forwarders) and that
// every go.mod is tidy, runs staticcheck on every module, and actionlint on the GitHub workflows. (go vet
// runs in Vet.)
func Lint() error {
	if err := checkGofmt(); err != nil {
		return err
	}
	if err := checkVersions(); err != nil {
		return err
	}
	if err := checkForwarders(); err != nil {
		return err
	}
	err := forEachModule(func(mod string) error {
		if err := goIn(mod, nil, "mod", "tidy", "-diff"); err != nil {
			return fmt.Errorf("go.mod or go.sum is not tidy (run go mod tidy there): %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	pats, err := workspacePatterns()
	if err != nil {
		return err
	}
	if err := goIn(".", toolEnv, append([]string{"run", staticcheckPkg}, pats...)...); err != nil {
		return err
	}
	return goIn(".", append([]string{"GOWORK=off", "GOFLAGS=-mod=mod"}, toolEnv...), "run", actionlintPkg)
}

// Bench runs every module's benchmarks into one benchstat-readable file (BENCH_OUT, default bench.txt)
// and prints benchstat's summary of it. Run it on an otherwise idle machine.
func Bench() error {
	out := envOr("BENCH_OUT", "bench.txt")
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	args := []string{"test", "-run=^$", "-bench=.", "-benchmem",
		"-benchtime=" + envOr("BENCHTIME", "1s"), "-count=" + envOr("COUNT", "6"), "-timeout=60m", "./..."}
	err = forEachModule(func(mod string) error {
		return goInTo(mod, nil, io.MultiWriter(f, os.Stdout), args...)
	})
	if err != nil {
		return err
	}
	fmt.Printf("\nwrote %s; benchstat summary:\n", out)
	return goIn(".", append([]string{"GOWORK=off", "GOFLAGS=-mod=mod"}, toolEnv...), "run", benchstatPkg, out)
}

// Ratios runs the runtime's paired benchmarks of the scheduler's hot paths (ping-pong, yield, spawn from
// outside: blitz and the goroutine equivalent alternating inside each
// op, so that a noisy machine shifts both sides alike) COUNT times (default 8) and prints, for each, the
// median and the range of its ratio to the goroutines and of its time per unit. BENCHTIME sets each run's
// length (default 300x).
func Ratios() error {
	var out bytes.Buffer
	args := []string{"test", "-run=^$", "-bench=^Benchmark(PingPong|YieldMany|SpawnRemote)Paired", "-benchtime=" + envOr("BENCHTIME", "300x"),
		"-count=" + envOr("COUNT", "8"), "-timeout=60m", "."}
	if err := goInTo(".", nil, io.MultiWriter(&out, os.Stdout), args...); err != nil {
		return err
	}
	rows, order := pairedRows(out.String())
	fmt.Printf("\n%-44s %5s %24s %20s %20s\n", "benchmark", "runs", "ratio median (range)", "blitz ns/unit", "goroutines ns/unit")
	for _, name := range order {
		r := rows[name]
		if len(r.ratio) == 0 {
			continue
		}
		fmt.Printf("%-44s %5d %24s %20s %20s\n", name, len(r.ratio), spread(r.ratio, "%.3f"), spread(r.blitz, "%.1f"), spread(r.gor, "%.1f"))
	}
	return nil
}

// pairedRow is what the runs of one paired benchmark reported.
type pairedRow struct{ ratio, blitz, gor []float64 }

// pairedRows collects the metrics of each paired benchmark's runs from go test's output, and the names in
// their first order.
func pairedRows(out string) (map[string]*pairedRow, []string) {
	rows := map[string]*pairedRow{}
	var order []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		r := rows[f[0]]
		if r == nil {
			r = &pairedRow{}
			rows[f[0]] = r
			order = append(order, f[0])
		}
		for i := 2; i+1 < len(f); i += 2 {
			var v float64
			if _, err := fmt.Sscan(f[i], &v); err != nil {
				continue
			}
			switch unit := f[i+1]; {
			case unit == "ratio":
				r.ratio = append(r.ratio, v)
			case strings.HasPrefix(unit, "go-ns/"):
				r.gor = append(r.gor, v)
			case strings.HasPrefix(unit, "ns/") && unit != "ns/op":
				r.blitz = append(r.blitz, v)
			}
		}
	}
	return rows, order
}

// spread formats the median of vs and its range.
func spread(vs []float64, format string) string {
	if len(vs) == 0 {
		return "-"
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(format+" ("+format+"-"+format+")", med, s[0], s[len(s)-1])
}

// Peers compares blitz's servers with the peer libraries' (the peers module: Go's net and net/http,
// gnet, nbio and nbhttp, fasthttp), each server in a process of its own and the load in another: echo
// and HTTP throughput in total and per core of server CPU, then the memory of PEERS_IDLE (default 100000)
// idle echo connections and PEERS_IDLE_HTTP (default 10000) idle keep-alive HTTP connections that each
// made one round trip, spread over as many server processes as the open-file limit requires (each with a
// client process of its own). PEERS_FLAGS adds flags to the throughput runs (e.g. "-count 5 -duration
// 10s -conns 128"). The HTTP load is wrk (PEERS_LOAD=wrk, the default: installed from Debian's packages
// when absent) or peerbench's own Go client (PEERS_LOAD=go). Run it on an otherwise idle machine.
func Peers() error {
	extra := strings.Fields(os.Getenv("PEERS_FLAGS"))
	load := envOr("PEERS_LOAD", "wrk")
	if load == "wrk" {
		if err := ensureWrk(); err != nil {
			return err
		}
	}
	idle := envOr("PEERS_IDLE", "100000")
	idleHTTP := envOr("PEERS_IDLE_HTTP", "10000")
	runs := [][]string{
		append([]string{"-mode", "echo"}, extra...),
		append([]string{"-mode", "http", "-load", load}, extra...),
		{"-mode", "idle", "-idle", "echo", "-conns", idle},
		{"-mode", "idle", "-idle", "http", "-conns", idleHTTP},
	}
	for _, args := range runs {
		if err := goIn("peers", nil, append([]string{"run", "./cmd/peerbench"}, args...)...); err != nil {
			return err
		}
		fmt.Println()
	}
	return nil
}

// Fuzz runs each fuzz target of every module for FUZZTIME (default 30s).
func Fuzz() error {
	fuzztime := envOr("FUZZTIME", "30s")
	return forEachModule(func(mod string) error {
		targets, err := fuzzTargets(mod)
		if err != nil {
			return err
		}
		for _, t := range targets {
			fmt.Printf("== fuzz %s %s for %s\n", t.pkg, t.name, fuzztime)
			if err := fuzzOne(mod, t.pkg, t.name, fuzztime); err != nil {
				return fmt.Errorf("fuzz %s %s: %w", t.pkg, t.name, err)
			}
		}
		return nil
	})
}

// httpFuzzTargets are the HTTP server's fuzz targets over raw requests: the parser alone, and the whole
// server against net/http (FuzzDifferential: the same bytes to both, the handler's view and the client's
// compared). Their corpora are in httpserver/testdata/fuzz.
var httpFuzzTargets = []string{"FuzzDifferential", "FuzzParseRequest"}

// FuzzHTTP fuzzes the HTTP server's request handling against net/http for FUZZTIME per target (default
// 10m). A failing input is written to httpserver/testdata/fuzz/<target>/ by the go command: keep it
// there, it becomes part of the corpus every `go test` runs.
func FuzzHTTP() error {
	return fuzzHTTP(envOr("FUZZTIME", "10m"))
}

// FuzzHTTPShort is FuzzHTTP for 15 seconds per target, as CI runs it.
func FuzzHTTPShort() error {
	return fuzzHTTP("15s")
}

func fuzzHTTP(fuzztime string) error {
	for _, name := range httpFuzzTargets {
		fmt.Printf("== fuzz httpserver %s for %s\n", name, fuzztime)
		if err := fuzzOne("httpserver", ".", name, fuzztime); err != nil {
			return fmt.Errorf("fuzz httpserver %s: %w", name, err)
		}
	}
	return nil
}

// fuzzAttempts bounds the runs of one fuzz target that end in Go's coordinator race alone (see
// coordinatorDeadlineOnly); a finding ends the runs at once.
const fuzzAttempts = 3

// fuzzOne fuzzes one target for fuzztime. Go 1.26's fuzzing coordinator can fail a run that found nothing
// when its -fuzztime deadline fires (go.dev/issue/75804, fixed in Go 1.27): it compares the deadline
// context's error with its child's before the child is cancelled, and reports the bare "context deadline
// exceeded" as the target's failure. Such a run wrote no failing input and printed none, so it is run
// again, up to fuzzAttempts times; any other failure is returned as it is.
func fuzzOne(dir, pkg, name, fuzztime string) error {
	var err error
	for attempt := 1; attempt <= fuzzAttempts; attempt++ {
		var out bytes.Buffer
		err = goInTo(dir, nil, io.MultiWriter(os.Stdout, &out), "test", "-run=^$", "-fuzz=^"+name+"$", "-fuzztime="+fuzztime, pkg)
		if err == nil || !coordinatorDeadlineOnly(out.String(), name) {
			return err
		}
		fmt.Printf("== fuzz %s: Go's coordinator failed the run at its deadline with no finding (go.dev/issue/75804); run %d of %d\n", name, attempt, fuzzAttempts)
	}
	return err
}

// coordinatorDeadlineOnly reports whether a failed fuzz run's output is the coordinator's deadline race
// and nothing else: the target's FAIL line followed directly by the bare error, and no failing input.
// A failure inside the target names a file and line; a finding prints "Failing input written to".
func coordinatorDeadlineOnly(out, name string) bool {
	if strings.Contains(out, "Failing input written to") {
		return false
	}
	lines := strings.Split(out, "\n")
	for i, line := range lines[:max(len(lines)-1, 0)] {
		if strings.HasPrefix(line, "--- FAIL: "+name+" (") && strings.TrimSpace(lines[i+1]) == "context deadline exceeded" {
			return strings.Count(out, "--- FAIL:") == 1
		}
	}
	return false
}

// Sim runs the simulation suites with many seeds: every workload of tests/simprims (the sync primitives,
// the channels, JoinSet) under the PCT and Random strategies, SIMSEEDS seeds each (default 2000; go test
// runs 150 with -short, 1000 without). A failing seed prints the command that replays it.
func Sim() error {
	seeds := envOr("SIMSEEDS", "2000")
	if n, err := strconv.Atoi(seeds); err != nil || n < 1 {
		return fmt.Errorf("SIMSEEDS=%q: want a positive number of seeds", seeds)
	}
	return goIn("tests", nil, "test", "-run", ".", "-timeout", "60m", "./simprims/...", "-args", "-sim.seeds="+seeds)
}

// Windows cross-compiles the tests of the modules users install (versions.txt's public ones) for
// windows/amd64 and runs them under Wine, at their -short sizes: one go command over the workspace with
// Wine as its -exec program, so that the test binaries build two at a time and each runs in its
// package's directory. (Vet type-checks every module, tests included, for windows.) It skips with a
// message when Wine is absent, unless BLITZ_INSTALL_WINE=1 lets it install Wine first.
func Windows() error {
	wine, err := findWine()
	if err != nil {
		fmt.Println("windows: skipped:", err)
		return nil
	}
	if err := ensureWinePrefix(wine); err != nil {
		return err
	}
	pats, err := libraryPatterns()
	if err != nil {
		return err
	}
	// The binaries run through .ci/wine/exec, whose output goes through a file: Wine's helper
	// processes that a test starts must not hold go test's pipe open (see the script).
	exe, err := filepath.Abs(filepath.Join(".ci", "wine", "exec"))
	if err != nil {
		return err
	}
	env := []string{"GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0", "WINEDEBUG=-all", "BLITZ_WINE=" + wine}
	return goIn(".", env, append([]string{"test", "-exec", exe, "-short", "-count=1", "-timeout", "10m"}, pats...)...)
}

// Demo runs the main demonstration: the side-by-side benchmarks in quick mode, a table and an SVG chart.
func Demo() error {
	return goIn(".", nil, "run", "./cmd/blitzbench")
}

// DemoSmoke runs the demonstration on one comparison of three modules (a leaf module, the root module,
// parallel), once each with short runs and no chart: it fails, as the demonstration does, when a row finds no result, so that the README's first
// command cannot break unseen. The figures mean nothing.
func DemoSmoke() error {
	return goIn(".", nil, "run", "./cmd/blitzbench", "-count=1", "-benchtime=1x", "-svg=",
		"-run=^(LocalPushPop: wsqueue vs chan|SpawnMany: blitz vs goroutines|Fib: parallel vs sequential)$")
}

// CI is what continuous integration runs: lint, cross-platform vet, every module's tests under -race
// inside the workspace at their -short sizes, the HTTP fuzz targets briefly, the demonstration's smoke
// run, every module vetted on its own (GOWORK=off) and its short tests with the oldest Go supported, the
// consumer check (each public module installed from a module proxy), and the Windows tests under Wine
// where Wine is present. It prints the time each step took. The Debian packages that the race and windows
// steps install when allowed are installed in the background from the start (startInstalls).
func CI() error {
	start := time.Now()
	startInstalls()
	defer awaitInstalls() // no apt-get left running after a failed step
	steps := []struct {
		name string
		fn   func() error
	}{
		{"lint", Lint}, {"vet", Vet}, {"race", Race}, {"fuzzHTTPShort", FuzzHTTPShort},
		{"demoSmoke", DemoSmoke}, {"oldest", Oldest}, {"consumable", Consumable}, {"windows", Windows},
	}
	var took []string
	for _, step := range steps {
		t := time.Now()
		err := step.fn()
		took = append(took, fmt.Sprintf("%s %s", step.name, time.Since(t).Round(time.Second)))
		fmt.Printf("== ci: %s (total %s)\n", strings.Join(took, ", "), time.Since(start).Round(time.Second))
		if err != nil {
			return fmt.Errorf("ci step %s: %w", step.name, err)
		}
	}
	return nil
}

// ---- helpers ----

// modules returns the directories listed in go.work, relative to the repository root.
func modules() ([]string, error) {
	out, err := exec.Command(mg.GoCmd(), "work", "edit", "-json").Output()
	if err != nil {
		return nil, fmt.Errorf("reading go.work: %w", err)
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &work); err != nil {
		return nil, fmt.Errorf("parsing go.work: %w", err)
	}
	mods := make([]string, 0, len(work.Use))
	for _, u := range work.Use {
		mods = append(mods, filepath.Clean(u.DiskPath))
	}
	return mods, nil
}

// workspacePatterns returns a package pattern for every module in go.work ("./...", "./future/...", ...),
// for one go command run at the root to cover them all.
func workspacePatterns() ([]string, error) {
	mods, err := modules()
	if err != nil {
		return nil, err
	}
	pats := make([]string, 0, len(mods))
	for _, mod := range mods {
		pats = append(pats, modulePattern(mod))
	}
	return pats, nil
}

// modulePattern is the package pattern of module directory mod, relative to the root.
func modulePattern(mod string) string {
	if mod == "." {
		return "./..."
	}
	return "./" + filepath.ToSlash(mod) + "/..."
}

// libraryPatterns returns the patterns of workspacePatterns for the modules that users install (the
// public ones of versions.txt), without the examples, the test suites, the benchmark peers and the
// build: the modules whose behaviour on an older Go or another system a user depends on.
func libraryPatterns() ([]string, error) {
	v, err := readVersions()
	if err != nil {
		return nil, err
	}
	mods, err := modules()
	if err != nil {
		return nil, err
	}
	var pats []string
	for _, mod := range mods {
		if slices.Contains(v.Public, mod) {
			pats = append(pats, modulePattern(mod))
		}
	}
	return pats, nil
}

// forEachModule calls fn for every module in go.work and stops at the first error.
func forEachModule(fn func(mod string) error) error {
	mods, err := modules()
	if err != nil {
		return err
	}
	for _, mod := range mods {
		if err := fn(mod); err != nil {
			return fmt.Errorf("module %s: %w", mod, err)
		}
	}
	return nil
}

// goIn runs the go command in dir with extra environment, streaming its output.
func goIn(dir string, env []string, args ...string) error {
	return goInTo(dir, env, os.Stdout, args...)
}

func goInTo(dir string, env []string, stdout io.Writer, args ...string) error {
	fmt.Printf("== (%s) go %s\n", dir, strings.Join(args, " "))
	cmd := exec.Command(mg.GoCmd(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	return cmd.Run()
}

// raceSupported reports whether -race works here: cgo on, a C compiler present, and Linux, macOS or
// FreeBSD. Windows is left out: its race runtime depends on the mingw toolchain the machine happens to
// have, and the Linux CI job runs every test under -race anyway.
func raceSupported() bool {
	if os.Getenv("BLITZ_RACE") == "0" {
		return false
	}
	out, err := exec.Command(mg.GoCmd(), "env", "CGO_ENABLED", "CC").Output()
	if err != nil {
		return false
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 || fields[0] != "1" {
		return false
	}
	if _, err := exec.LookPath(fields[1]); err != nil {
		return false
	}
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "freebsd/amd64":
		return true
	}
	return false
}

// checkGofmt fails when any Go file in the repository is not gofmt-formatted.
func checkGofmt() error {
	fmt.Println("== gofmt -l .")
	out, err := exec.Command("gofmt", "-l", ".").Output()
	if err != nil {
		return fmt.Errorf("gofmt: %w", err)
	}
	if files := strings.TrimSpace(string(out)); files != "" {
		return fmt.Errorf("not gofmt-formatted:\n%s", files)
	}
	return nil
}

type fuzzTarget struct{ pkg, name string }

// fuzzTargets lists the Fuzz functions of every package of a module.
func fuzzTargets(mod string) ([]fuzzTarget, error) {
	cmd := exec.Command(mg.GoCmd(), "test", "-list=^Fuzz", "./...")
	cmd.Dir = mod
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing fuzz targets: %w", err)
	}
	var targets []fuzzTarget
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Fuzz"):
			names = append(names, line)
		case strings.HasPrefix(line, "ok "):
			// "ok  <import path>  0.01s" closes one package's list.
			fields := strings.Fields(line)
			for _, n := range names {
				targets = append(targets, fuzzTarget{pkg: fields[1], name: n})
			}
			names = nil
		}
	}
	return targets, sc.Err()
}

// ---- Windows under Wine ----

var errNoWine = errors.New("wine64 not found (set BLITZ_INSTALL_WINE=1 to install it from Debian's packages)")

// wineLoader is where Debian's wine64 package puts the loader that runs the Windows test binaries.
const wineLoader = "/usr/lib/wine/wine64"

// wineMissing lists the Debian packages that Windows needs and this machine lacks: Wine and mingw (which
// builds the DLL of ensureWinePrefix), when the loader is absent.
func wineMissing() []string {
	if _, err := os.Stat(wineLoader); err == nil {
		return nil
	}
	return []string{"wine64", "gcc-mingw-w64-x86-64"}
}

// findWine returns the wine64 loader, installing Wine and mingw when BLITZ_INSTALL_WINE=1.
func findWine() (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("wine runs only on linux hosts, this is %s", runtime.GOOS)
	}
	awaitInstalls()
	missing := wineMissing()
	if missing == nil {
		return wineLoader, nil
	}
	if os.Getenv("BLITZ_INSTALL_WINE") != "1" {
		return "", errNoWine
	}
	if err := aptInstall(missing); err != nil {
		return "", err
	}
	return wineLoader, nil
}

// chromiumMissing lists what the tests drive from outside and this machine lacks on PATH: Chromium (the
// runtime's console page is tested in headless Chromium) and curl (the HTTP server is tested against it).
func chromiumMissing() []string {
	var missing []string
	for _, tool := range []string{"chromium", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

// ensureChromium installs Chromium and curl from Debian's packages when BLITZ_INSTALL_CHROMIUM=1 and they
// are not on PATH. It then sets BLITZ_REQUIRE_CHROMIUM=1 so that the browser test fails rather than skips
// without it.
func ensureChromium() error {
	if os.Getenv("BLITZ_INSTALL_CHROMIUM") != "1" || runtime.GOOS != "linux" {
		return nil
	}
	awaitInstalls()
	if missing := chromiumMissing(); len(missing) > 0 {
		if err := aptInstall(missing); err != nil {
			return err
		}
	}
	return os.Setenv("BLITZ_REQUIRE_CHROMIUM", "1")
}

// aptInstall installs pkgs from Debian's packages, after refreshing the package lists.
func aptInstall(pkgs []string) error {
	fmt.Println("== installing", strings.Join(pkgs, ", "), "from Debian's packages")
	install := append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...)
	for _, args := range [][]string{{"update", "-qq"}, install} {
		if err := aptGet(args...); err != nil {
			return err
		}
	}
	return nil
}

// background is the one run of startInstalls; awaitInstalls waits for it to end.
var background struct {
	mu   sync.Mutex
	done chan struct{} // closed when the installs end; nil when none started
}

// startInstalls begins, in the background, the installs that later steps would make on their own
// (ensureChromium's and findWine's, as BLITZ_INSTALL_CHROMIUM and BLITZ_INSTALL_WINE allow) in one
// apt-get run, and Wine's first boot after it, so that downloading and unpacking overlap the steps
// that only compute. A failure here is only reported: the step that needs the package installs it
// again and fails with its own error.
func startInstalls() {
	if runtime.GOOS != "linux" {
		return
	}
	var pkgs []string
	if os.Getenv("BLITZ_INSTALL_CHROMIUM") == "1" {
		pkgs = append(pkgs, chromiumMissing()...)
	}
	wine := os.Getenv("BLITZ_INSTALL_WINE") == "1"
	if wine {
		pkgs = append(pkgs, wineMissing()...)
	}
	if len(pkgs) == 0 && !wine {
		return
	}
	done := make(chan struct{})
	background.mu.Lock()
	background.done = done
	background.mu.Unlock()
	go func() {
		defer close(done)
		if len(pkgs) > 0 {
			if err := aptInstall(pkgs); err != nil {
				fmt.Fprintln(os.Stderr, "background install failed; the step that needs it will retry:", err)
				return
			}
		}
		if wine && wineMissing() == nil {
			if err := ensureWinePrefix(wineLoader); err != nil {
				fmt.Fprintln(os.Stderr, "preparing Wine's prefix failed; the windows step will retry:", err)
			}
		}
	}()
}

// awaitInstalls waits for the installs of startInstalls, when it started any.
func awaitInstalls() {
	background.mu.Lock()
	done := background.done
	background.mu.Unlock()
	if done != nil {
		<-done
	}
}

// ensureWrk installs wrk, the HTTP load generator of `peers`, from Debian's packages when it is not on
// PATH.
func ensureWrk() error {
	if _, err := exec.LookPath("wrk"); err == nil {
		return nil
	}
	return aptInstall([]string{"wrk"})
}

// aptGet runs apt-get as root, through sudo when this process is not root.
func aptGet(args ...string) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("cannot install Debian packages: %w", err)
	}
	name := "apt-get"
	if os.Geteuid() != 0 {
		name, args = "sudo", append([]string{"-n", "apt-get"}, args...)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// ensureWinePrefix creates the Wine prefix and puts into it the bcryptprimitives.dll that Go >= 1.22
// binaries need and Wine 8 lacks (see .ci/wine).
func ensureWinePrefix(wine string) error {
	prefix := os.Getenv("WINEPREFIX")
	if prefix == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		prefix = filepath.Join(home, ".wine")
	}
	dll := filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	if _, err := os.Stat(dll); err == nil {
		return nil
	}
	boot := exec.Command(wine, "cmd", "/c", "exit")
	boot.Env = append(os.Environ(), "WINEDEBUG=-all")
	_ = boot.Run() // creates the prefix; its exit status says nothing useful
	src, err := filepath.Abs(filepath.Join(".ci", "wine", "bcryptprimitives.c"))
	if err != nil {
		return err
	}
	cc := exec.Command("x86_64-w64-mingw32-gcc", "-O2", "-shared", "-o", dll, src, "-ladvapi32")
	cc.Stdout, cc.Stderr = os.Stdout, os.Stderr
	if err := cc.Run(); err != nil {
		return fmt.Errorf("building bcryptprimitives.dll (needs gcc-mingw-w64-x86-64): %w", err)
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
