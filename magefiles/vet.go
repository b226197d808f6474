package main

// The cross-platform vet. `go vet` for another platform compiles every package that the vetted ones
// import, the standard library included, to read their export data: on a fresh machine that is most of
// a minute per platform, for code it never looks at. Vetting from source instead loads the packages and
// everything they import with go/packages, type-checks them from their source for that platform (the
// same go/types checker that vet itself runs on the vetted packages), and runs go vet's own analyzers on
// them with the analysis checker: the same diagnostics, and the same type errors (a constant that
// overflows 32-bit int, a file whose build tags leave a name undefined), in a fraction of the time.
// What it does not do is run the compiler's back end for that platform; the host's vet and every
// test step compile for real.

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/asmdecl"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/buildtag"
	"golang.org/x/tools/go/analysis/passes/cgocall"
	"golang.org/x/tools/go/analysis/passes/composite"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/directive"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/framepointer"
	"golang.org/x/tools/go/analysis/passes/hostport"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/loopclosure"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/sigchanyzer"
	"golang.org/x/tools/go/analysis/passes/slog"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stdversion"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/testinggoroutine"
	"golang.org/x/tools/go/analysis/passes/tests"
	"golang.org/x/tools/go/analysis/passes/timeformat"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unsafeptr"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/passes/waitgroup"
)

// vetSuite is cmd/vet's suite of analyzers, the ones `go vet` runs by default (TestVetSuiteIsGoVets
// compares the names with `go tool vet help`).
var vetSuite = []*analysis.Analyzer{
	appends.Analyzer,
	asmdecl.Analyzer,
	assign.Analyzer,
	atomic.Analyzer,
	bools.Analyzer,
	buildtag.Analyzer,
	cgocall.Analyzer,
	composite.Analyzer,
	copylock.Analyzer,
	defers.Analyzer,
	directive.Analyzer,
	errorsas.Analyzer,
	framepointer.Analyzer,
	hostport.Analyzer,
	httpresponse.Analyzer,
	ifaceassert.Analyzer,
	loopclosure.Analyzer,
	lostcancel.Analyzer,
	nilfunc.Analyzer,
	printf.Analyzer,
	shift.Analyzer,
	sigchanyzer.Analyzer,
	slog.Analyzer,
	stdmethods.Analyzer,
	stdversion.Analyzer,
	stringintconv.Analyzer,
	structtag.Analyzer,
	testinggoroutine.Analyzer,
	tests.Analyzer,
	timeformat.Analyzer,
	unmarshal.Analyzer,
	unreachable.Analyzer,
	unsafeptr.Analyzer,
	unusedresult.Analyzer,
	waitgroup.Analyzer,
}

// vetFromSource runs vetSuite on the packages that pats match in dir, their tests included, for the
// platform env names (GOOS, GOARCH, CGO_ENABLED=0). It fails when any package it loads has errors
// (listing them all, before any analysis) and when the matched packages have any diagnostic (listing
// them all, each once).
func vetFromSource(dir string, env []string, pats []string) error {
	cfg := &packages.Config{
		Mode:  packages.LoadAllSyntax,
		Tests: true,
		Dir:   dir,
		Env:   append(os.Environ(), env...),
	}
	pkgs, err := packages.Load(cfg, pats...)
	if err != nil {
		return fmt.Errorf("loading %s: %w", strings.Join(pats, " "), err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("%d package errors:\n%s", len(errs), strings.Join(dedupSorted(errs), "\n"))
	}
	g, err := checker.Analyze(vetSuite, pkgs, nil)
	if err != nil {
		return err
	}
	var found []string
	for act := range g.All() {
		if act.Err != nil {
			found = append(found, fmt.Sprintf("%s on %s: %v", act.Analyzer.Name, act.Package.ID, act.Err))
		}
		if !act.IsRoot {
			continue
		}
		for _, d := range act.Diagnostics {
			// A file of package p is analyzed in p and again in p's test variant: one line for both.
			found = append(found, fmt.Sprintf("%s: %s (%s)", act.Package.Fset.Position(d.Pos), d.Message, act.Analyzer.Name))
		}
	}
	if len(found) > 0 {
		found = dedupSorted(found)
		return fmt.Errorf("%d vet findings:\n%s", len(found), strings.Join(found, "\n"))
	}
	return nil
}

// dedupSorted sorts lines and drops the repeats.
func dedupSorted(lines []string) []string {
	slices.Sort(lines)
	return slices.Compact(lines)
}
