package progfuzz

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz/asyncgen"
)

var (
	flagN     = flag.Int("progfuzz.n", 0, "programs to generate (0: 30 with -short, 150 without)")
	flagSeed  = flag.Uint64("progfuzz.seed", 1, "seed of the first program")
	flagBatch = flag.Int("progfuzz.batch", 0, "programs per package build (0: all of them, at most 150)")
	flagSched = flag.Int("progfuzz.scheds", 0, "readiness schedules per program and argument (0: 6 with -short, 20 without)")
	flagSave  = flag.String("progfuzz.save", "", "directory to write each failing program to, as a corpus file")
	flagSize  = flag.Int("progfuzz.size", 0, "the most statements a program has (0: the generator's default)")
	flagKeep  = flag.String("progfuzz.keep", "", "directory to build the (last) package in and keep, instead of a temporary one")
)

// program is a Program with where it came from, for the report.
type program struct {
	Program
	origin string // "seed N" or the corpus file
}

// TestFuzzPrograms generates programs, compiles them with the generator
// and runs each generated and as its reference (the same source with
// every await blocking) over many readiness schedules, and cancelled at
// every await. It also runs the corpus in testdata/corpus, programs that
// once found a bug.
func TestFuzzPrograms(t *testing.T) {
	needGo(t)
	n := *flagN
	if n == 0 {
		n = 150
		if testing.Short() {
			n = 30
		}
	}
	if *flagSize > 0 {
		defer func(old int) { MaxStatements = old }(MaxStatements)
		MaxStatements = *flagSize
	}
	progs := corpus(t)
	batch := *flagBatch
	if batch <= 0 {
		batch = min(n+len(progs), 150)
	}
	for i := range n {
		seed := *flagSeed + uint64(i)
		progs = append(progs, program{Generate(fmt.Sprintf("p%d", seed), seed), fmt.Sprintf("seed %d", seed)})
	}
	literals := 0
	for _, p := range progs {
		if strings.Contains(p.Source, "future.Async") {
			literals++
		}
	}
	t.Logf("programs with async function literals: %d of %d", literals, len(progs))
	if n >= 30 && AsyncLiterals && literals == 0 {
		t.Errorf("%d programs and none with an async function literal", n)
	}
	openDefers, sliceDefers = 0, 0
	for len(progs) > 0 {
		k := min(batch, len(progs))
		runBatch(t, progs[:k])
		progs = progs[k:]
	}
	// Both forms of defer ran: the open-coded one (at most 8 defer
	// statements, none in a loop) and the slice of closures.
	t.Logf("state machines with open-coded defers: %d; with a slice of deferred closures: %d", openDefers, sliceDefers)
	if n >= 30 && (openDefers == 0 || sliceDefers == 0) {
		t.Errorf("%d programs gave %d state machines with open-coded defers and %d with a slice of closures: want both forms", n, openDefers, sliceDefers)
	}
}

// openDefers and sliceDefers count the state machines runBatch generated
// with each form of defer, by their fields.
var (
	openDefers, sliceDefers int
	openDefersField         = regexp.MustCompile(`(?m)^\s*deferBits\d*\s+uint8\s`)
	sliceDefersField        = regexp.MustCompile(`(?m)^\s*defers\d*\s+\[\]func\(\)\s`)
)

// corpus loads testdata/corpus: each file holds one async function,
// named after the file, and may say "// known: <bug>" to be skipped until
// the generator is fixed.
func corpus(t *testing.T) []program {
	names, err := filepath.Glob("testdata/corpus/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []program
	for _, file := range names {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".go")
		if m := regexp.MustCompile(`(?m)^// known: (.*)$`).FindSubmatch(src); m != nil {
			t.Run("corpus/"+name, func(t *testing.T) { t.Skipf("known: %s", m[1]) })
			continue
		}
		p, err := parseProgram(name, string(src))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, program{p, file})
	}
	return out
}

// parseProgram takes the function out of a corpus file: its imports, the
// function (and the helper it awaits, declared first) and, after a line
// libMarker, the file of lib that declares the async function of lib it
// awaits.
func parseProgram(name, src string) (Program, error) {
	src, libSrc, hasLib := strings.Cut(src, "\n"+libMarker+"\n")
	re := regexp.MustCompile(`(?m)^//blitz:async\nfunc (\(r (\*?Rec|\*?Box\[N\])\) )?` + name + `(\[N ~int\])?\(e \*Env, n (?:int|N)\)(.*) \{$`)
	m := re.FindStringSubmatchIndex(src)
	if m == nil {
		return Program{}, fmt.Errorf("no //blitz:async function %s(e *Env, n int) in the generator's forms", name)
	}
	p := Program{Name: name, Source: src[m[0]:]}
	if i := strings.Index(src, "//blitz:async\nfunc "+name+"h(e *Env, n int) int {"); i >= 0 && i < m[0] {
		p.Helper, p.Source = name+"h", src[i:]
	}
	if m[4] >= 0 {
		p.Receiver = src[m[4]:m[5]]
	}
	p.Generic = m[6] >= 0
	switch res := src[m[8]:m[9]]; res {
	case "":
	case " int", " (res int)":
		p.Result = IntResult
	case " (int, error)", " (res int, rerr error)":
		p.Result = IntErrResult
	default:
		return Program{}, fmt.Errorf("%s: results %q are not one of the generator's", name, res)
	}
	p.Named = strings.Contains(src[m[8]:m[9]], "res ")
	imports := func(src string) (string, error) {
		f, err := parser.ParseFile(token.NewFileSet(), name+".go", src, parser.ImportsOnly)
		if err != nil {
			return "", err
		}
		var specs string
		for _, is := range f.Imports {
			if is.Path.Value == strconv.Quote(futurePath) {
				continue
			}
			if is.Name != nil {
				specs += is.Name.Name + " "
			}
			specs += is.Path.Value + "\n"
		}
		return specs, nil
	}
	var err error
	if p.Imports, err = imports(src); err != nil {
		return Program{}, err
	}
	if hasLib {
		lm := regexp.MustCompile(`(?m)^//blitz:async\nfunc (\w+)(\[N ~int\])?\(e Env, n (?:int|N)\)`).FindStringSubmatchIndex(libSrc)
		if lm == nil {
			return Program{}, fmt.Errorf("%s: no //blitz:async function of lib after %q", name, libMarker)
		}
		p.Lib, p.LibHelper = libSrc[lm[0]:], libSrc[lm[2]:lm[3]]
		if p.LibImports, err = imports(libSrc); err != nil {
			return Program{}, err
		}
	}
	return p, nil
}

// placement is where a program's source goes: a plain file, a test file,
// a file named for this GOOS, or a file with a //go:build line. The
// generated file must be named for it and carry the constraint.
type placement struct {
	suffix string // what follows the program's name: ".go", "_test.go", "_GOOS.go"
	header string // a //go:build line and a blank line, or ""
	want   string // the //go:build line the generated file must have, or ""
}

// placeOf places the i-th program of a batch: one in five in a test file,
// one in five in a file named for the GOOS the tests run on, one in five
// behind a build constraint that holds, the rest in plain files.
func placeOf(i int) placement {
	switch i % 5 {
	case 1:
		return placement{suffix: "_test.go"}
	case 2:
		want := "//go:build " + goruntime.GOOS
		switch goruntime.GOOS {
		case "linux":
			want = "//go:build linux || android"
		case "darwin":
			want = "//go:build darwin || ios"
		case "solaris":
			want = "//go:build solaris || illumos"
		}
		return placement{suffix: "_" + goruntime.GOOS + ".go", want: want}
	case 3:
		return placement{suffix: ".go", header: "//go:build !blitzfuzzoff\n\n", want: "//go:build !blitzfuzzoff"}
	}
	return placement{suffix: ".go"}
}

func (p placement) source(name string) string { return name + p.suffix }

// generated is the name of the generated file of the program name.
func (p placement) generated(name string) string {
	if p.suffix == "_test.go" {
		return name + "_async_test.go"
	}
	return strings.TrimSuffix(name+p.suffix, ".go") + "_async.go"
}

// fileHeader starts every program's file that imports future only.
const fileHeader = "package " + runPackage + "\n\nimport \"github.com/blitz-go/blitz/future\"\n\n"

const futurePath = "github.com/blitz-go/blitz/future"

// header starts the program's file: the package clause and its imports.
func header(p Program) string {
	if p.Imports == "" {
		return fileHeader
	}
	return "package " + runPackage + "\n\nimport (\n\t\"" + futurePath + "\"\n\n" + indentLines(p.Imports) + ")\n\n"
}

// libHeader starts the file of lib of a program's async function of lib.
func libHeader(p Program) string {
	if p.LibImports == "" {
		return "package lib\n\nimport \"github.com/blitz-go/blitz/future\"\n\n"
	}
	return "package lib\n\nimport (\n\t\"" + futurePath + "\"\n\n" + indentLines(p.LibImports) + ")\n\n"
}

// libReference is the reference of p's file of lib.
func libReference(p Program) string {
	imports := ""
	if p.LibImports != "" {
		imports = "import (\n" + indentLines(p.LibImports) + ")\n\n"
	}
	return "package lib\n\n" + imports + refOf(p.Lib, p.LibHelper)
}

// libMarker separates, in a corpus file, the program's file from the file
// of lib it needs.
const libMarker = "// ---- lib ----"

func indentLines(s string) string {
	return regexp.MustCompile(`(?m)^(.)`).ReplaceAllString(s, "\t$1")
}

// writeProgram writes the files of p into the module in dir: its source
// placed as pl says, its reference and, if it has one, its file of lib and
// that file's reference.
func writeProgram(t testing.TB, dir string, p Program, pl placement) {
	t.Helper()
	write(t, dir, pl.source(p.Name), pl.header+header(p)+p.Source)
	write(t, dir, p.Name+"_ref_test.go", Reference(p))
	if p.Lib != "" {
		write(t, dir, filepath.Join("lib", p.Name+".go"), libHeader(p)+p.Lib)
		write(t, dir, filepath.Join("lib", p.Name+"_ref.go"), libReference(p))
	}
}

// removeProgram removes the files of p from the module in dir, the
// generated ones too.
func removeProgram(dir string, p Program, pl placement) {
	for _, f := range []string{pl.source(p.Name), p.Name + "_ref_test.go", pl.generated(p.Name),
		filepath.Join("lib", p.Name+".go"), filepath.Join("lib", p.Name+"_ref.go"), filepath.Join("lib", p.Name+"_async.go")} {
		os.Remove(filepath.Join(dir, f))
	}
}

// goEnv is the environment of the go command in the temporary module: its
// own module (outside the workspace), with the local toolchain; the
// modules it needs are those the repository's own tests load.
var goEnv = []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}

// runBatch builds one temporary module holding progs and runs its test.
func runBatch(t *testing.T, progs []program) {
	dir := t.TempDir()
	if *flagKeep != "" {
		dir = *flagKeep
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	writeModule(t, dir, root, true)

	byName := map[string]program{}
	files := map[string]placement{}
	for i, p := range progs {
		byName[p.Name] = p
		pl := placeOf(i)
		files[p.Name] = pl
		writeProgram(t, dir, p.Program, pl)
	}
	for _, kv := range goEnv {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}

	// Generate, checking the generator's intermediate form between its
	// passes; a program the generator rejects (or that does not
	// type-check, or breaks an invariant) is reported and left out, and
	// the rest generated again.
	// The driver is written before the generator runs: programs in test
	// files make the generator type-check the package's tests, which call
	// the constructors it is about to write (as a user's first run does).
	write(t, dir, "driver_test.go", driver(byName))
	var out map[string][]byte
	for range len(progs) + 1 {
		out, err = asyncgen.Options{Check: true}.GenerateFiles(dir, "./...")
		if err == nil {
			break
		}
		bad := blame(err.Error(), byName)
		if len(bad) == 0 {
			t.Fatalf("generator: %v", err)
		}
		for _, name := range bad {
			fail(t, byName[name], "the generator rejected it or it does not type-check:\n"+lines(err.Error(), name))
			removeProgram(dir, byName[name].Program, files[name])
			delete(byName, name)
		}
		write(t, dir, "driver_test.go", driver(byName))
	}
	if err != nil {
		t.Fatalf("generator: %v", err)
	}
	for path, src := range out {
		if err := os.WriteFile(path, src, 0o666); err != nil {
			t.Fatal(err)
		}
		openDefers += len(openDefersField.FindAll(src, -1))
		sliceDefers += len(sliceDefersField.FindAll(src, -1))
	}
	if _, ok := out[filepath.Join(dir, "lib", "async_async.go")]; !ok {
		t.Fatalf("the generator wrote nothing for lib/async.go")
	}
	for name := range byName {
		pl := files[name]
		src, ok := out[filepath.Join(dir, pl.generated(name))]
		_, libOK := out[filepath.Join(dir, "lib", name+"_async.go")]
		switch {
		case !ok:
			fail(t, byName[name], "the generator wrote nothing for it")
			delete(byName, name)
		case byName[name].Lib != "" && !libOK:
			fail(t, byName[name], "the generator wrote nothing for its file of lib")
			delete(byName, name)
		case pl.want != "" && !bytes.Contains(src, []byte("\n"+pl.want+"\n")):
			fail(t, byName[name], "its generated file "+pl.generated(name)+" lacks the constraint "+pl.want+":\n"+string(src))
			delete(byName, name)
		}
	}
	if len(byName) == 0 {
		return
	}
	write(t, dir, "driver_test.go", driver(byName))

	scheds := *flagSched
	if scheds == 0 {
		scheds = 20
		if testing.Short() {
			scheds = 6
		}
	}
	// A build failure in a generated file is the generator's: the
	// programs type-check. Leave those out and run the rest.
	for range len(progs) + 1 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "go", "test", "-v", "-count=1", "-vet=off", "-timeout=9m", ".", "-args", fmt.Sprintf("-scheds=%d", scheds))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), goEnv...)
		res, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			if m := regexp.MustCompile(`RUNS (\d+)`).FindSubmatch(res); m != nil {
				t.Logf("%d programs: %s runs (program x argument x schedule) compared with the reference; each also cancelled at every await", len(byName), m[1])
			}
			return
		}
		failed := map[string]bool{}
		for _, m := range regexp.MustCompile(`FAILPROG (\w+)`).FindAllSubmatch(res, -1) {
			failed[string(m[1])] = true
		}
		if len(failed) > 0 {
			for name := range failed {
				fail(t, byName[name], lines(string(res), "FAILPROG "+name+" "))
			}
			return
		}
		bad := blame(string(res), byName)
		if len(bad) == 0 {
			t.Fatalf("go test in %s: %v\n%s", dir, err, res)
		}
		for _, name := range bad {
			pl := files[name]
			async, _ := os.ReadFile(filepath.Join(dir, pl.generated(name)))
			if libAsync, err := os.ReadFile(filepath.Join(dir, "lib", name+"_async.go")); err == nil {
				async = append(append(async, "\nlib/"+name+"_async.go:\n"...), libAsync...)
			}
			fail(t, byName[name], "its generated code does not build:\n"+lines(string(res), name)+"\ngenerated:\n"+string(async))
			removeProgram(dir, byName[name].Program, pl)
			delete(byName, name)
		}
		if len(byName) == 0 {
			return
		}
		write(t, dir, "driver_test.go", driver(byName))
	}
}

// writeModule writes the temporary module's go.mod, go.sum and env.go
// into dir: a module of its own (outside the workspace) that reaches the
// repository's future and waker modules under root by replace; with pkgs,
// also the packages lib, a/util and b/util and types.go.
func writeModule(t testing.TB, dir, root string, pkgs bool) {
	t.Helper()
	gomod := fmt.Sprintf("module %s\n\ngo 1.25.0\n\nrequire (\n\tgithub.com/blitz-go/blitz/future v0.1.0\n\tgithub.com/blitz-go/blitz/waker v0.1.0\n)\n\n"+
		"replace (\n\tgithub.com/blitz-go/blitz/future => %s\n\tgithub.com/blitz-go/blitz/waker => %s\n)\n",
		runPackage, filepath.Join(root, "future"), filepath.Join(root, "waker"))
	var sum []byte
	for _, m := range []string{"future", "waker"} {
		b, err := os.ReadFile(filepath.Join(root, m, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	write(t, dir, "go.mod", gomod)
	write(t, dir, "go.sum", string(sum))
	write(t, dir, "env.go", envSource)
	if !pkgs {
		return
	}
	write(t, dir, "types.go", typesSource)
	for _, d := range []string{"lib", filepath.Join("a", "util"), filepath.Join("b", "util")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, filepath.Join("lib", "lib.go"), libSource)
	write(t, dir, filepath.Join("lib", "async.go"), libAsyncSource)
	write(t, dir, filepath.Join("lib", "async_ref.go"), libAsyncRef())
	write(t, dir, filepath.Join("a", "util", "util.go"), autilSource)
	write(t, dir, filepath.Join("b", "util", "util.go"), butilSource)
}

// Reference returns the reference of p, a test file: the function renamed
// NameRef, its awaits of async functions' constructors (its helper's and
// lib's) calls of their references, and the other future.Await and
// future.Try replaced by functions that block on the future.
func Reference(p Program) string {
	src := regexp.MustCompile(`\b`+p.Name+`([(\[])`).ReplaceAllString(p.Source, p.Name+"Ref$1")
	if p.Helper != "" {
		// The helper's reference is called, blocking, where the program
		// awaits the helper's future.
		src = strings.Replace(src, "func "+p.Helper+"(", "func "+p.Helper+"Ref(", 1)
	}
	src = refOf(src)
	imports := ""
	if p.Imports != "" {
		imports = "import (\n" + indentLines(p.Imports) + ")\n\n"
	}
	return "package " + runPackage + "\n\n" + imports + src
}

// driver returns driver_test.go for the programs.
func driver(progs map[string]program) string {
	names := make([]string, 0, len(progs))
	for name := range progs {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(driverSource)
	b.WriteString(driverHook)
	b.WriteString("\nvar cases = []testCase{\n")
	for _, name := range names {
		p := progs[name]
		// The call of the function, with Async or Ref.
		call := func(suffix string) string {
			c := name + suffix
			if p.Receiver != "" {
				c = "rc." + c
			}
			if p.Generic {
				return c + "[Num](e, Num(n))"
			}
			return c + "(e, n)"
		}
		var ref string
		switch p.Result {
		case NoResult:
			ref = fmt.Sprintf("%s; out := show(struct{}{}, nil)", call("Ref"))
		case IntResult:
			ref = fmt.Sprintf("out := show(%s, nil)", call("Ref"))
		default:
			ref = fmt.Sprintf("out := show(%s)", call("Ref"))
		}
		genf := fmt.Sprintf("gen(%s)", call("Async"))
		if p.Receiver != "" {
			// A method also shows its receiver's field at the end.
			rc := "rc := &Rec{base: n}; "
			if strings.Contains(p.Receiver, "Box") {
				rc = "rc := &Box[Num]{base: Num(n)}; "
			}
			ref = rc + ref + "; return out + fmt.Sprint(\" base=\", rc.base)"
			genf = fmt.Sprintf("%sreturn future.Map(%s, func(out string) string { return out + fmt.Sprint(\" base=\", rc.base) })", rc, genf)
		} else {
			ref += "; return out"
			genf = "return " + genf
		}
		fmt.Fprintf(&b, "\t{%q, func(e *Env, n int) future.Future[string] { %s },\n\t\tfunc(e *Env, n int) string { %s }},\n", name, genf, ref)
	}
	b.WriteString("}\n")
	return b.String()
}

// blame returns the programs whose files the messages name.
func blame(msg string, progs map[string]program) []string {
	var out []string
	seen := map[string]bool{}
	// p.go, p_test.go, p_GOOS.go, their generated files, the references
	// and the files of lib.
	re := regexp.MustCompile(`(\w+?)(?:_` + goruntime.GOOS + `)?(?:_async_test|_async|_ref_test|_ref|_test)?\.go:\d+`)
	for _, m := range re.FindAllStringSubmatch(msg, -1) {
		if _, ok := progs[m[1]]; ok && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// lines returns the lines of msg that mention s.
func lines(msg, s string) string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// fail reports a program that found a bug, with its origin and source,
// and saves it as a corpus file with -progfuzz.save.
func fail(t *testing.T, p program, why string) {
	t.Helper()
	lib := ""
	if p.Lib != "" {
		lib = "\nits file of lib:\n" + libHeader(p.Program) + p.Lib
	}
	t.Errorf("program %s (%s): %s\nprogram:\n%s%s%s", p.Name, p.origin, why, header(p.Program), p.Source, lib)
	if *flagSave != "" {
		if err := os.MkdirAll(*flagSave, 0o777); err != nil {
			t.Fatal(err)
		}
		src := header(p.Program) + "// From " + p.origin + ": " + firstLine(why) + "\n\n" + p.Source
		if p.Lib != "" {
			src += "\n" + libMarker + "\n" + libHeader(p.Program) + p.Lib
		}
		write(t, *flagSave, p.Name+".go", src)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
}

// needGo skips a test that needs the go command.
func needGo(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("needs the go command: %v", err)
	}
}
