package asyncgen_test

import (
	"bytes"
	"errors"
	"flag"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blitz-go/blitz/asyncgen"
	"golang.org/x/tools/go/ast/astutil"
)

var update = flag.Bool("update", false, "rewrite the golden files and the generated test files")

// check compares got with the file name, or writes it with -update.
func check(t *testing.T, name string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, got, 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go test -update and review the diff\ngot:\n%s", name, got)
	}
}

// checkClean fails if src is not as gofmt would write it.
func checkClean(t *testing.T, name string, src []byte) {
	t.Helper()
	formatted, err := format.Source(src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(formatted, src) {
		t.Errorf("%s is not gofmt-clean", name)
	}
}

// TestGolden generates the package testdata/golden and compares each output
// with its .golden file and with the generated file beside it; a run that
// checks the intermediate form between the passes generates the same.
func TestGolden(t *testing.T) {
	needGo(t)
	out, err := asyncgen.GenerateFiles("testdata/golden", "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("nothing generated")
	}
	for name, src := range out {
		checkClean(t, name, src)
		check(t, name+".golden", src)
		// The generated file itself, which TestGeneratedIsVetClean vets.
		check(t, name, src)
	}
	checked, err := asyncgen.Options{Check: true}.GenerateFiles("testdata/golden", "./...")
	if err != nil {
		t.Fatalf("with Check: %v", err)
	}
	sameFiles(t, "with Check", checked, out)
}

// sameFiles fails if got does not hold the files of want, byte for byte.
func sameFiles(t *testing.T, run string, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files generated, want %d", run, len(got), len(want))
	}
	for name, src := range want {
		if !bytes.Equal(got[name], src) {
			t.Errorf("%s: %s differs", run, name)
		}
	}
}

// TestDump dumps the intermediate form of Lookup (testdata/golden) and
// compares it with lookup.dump.golden; dumping changes nothing in what is
// generated.
func TestDump(t *testing.T) {
	needGo(t)
	want, err := asyncgen.GenerateFiles("testdata/golden", ".")
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	got, err := asyncgen.Options{Dump: "LookupAsync", DumpTo: &dump, Check: true}.GenerateFiles("testdata/golden", ".")
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "with Dump", got, want)
	check(t, "testdata/golden/lookup.dump.golden", dump.Bytes())

	// A method is named by its type too; a name that matches nothing is
	// an error.
	dump.Reset()
	if _, err := (asyncgen.Options{Dump: "Client.Fetch", DumpTo: &dump}).GenerateFiles("testdata/golden", "."); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dump.String(), "method Client.Fetch, methods.go: after pass layout") {
		t.Errorf("the dump of Client.Fetch starts with %q", strings.SplitN(dump.String(), "\n", 2)[0])
	}
	_, err = asyncgen.Options{Dump: "noSuchFunc", DumpTo: &dump}.GenerateFiles("testdata/golden", ".")
	if err == nil || !strings.Contains(err.Error(), "no async function named noSuchFunc") {
		t.Errorf("a Dump that names nothing: got %v", err)
	}
}

// TestEquivGeneratedIsFresh checks that the committed generated code of the
// equivalence package is what the generator writes now, that is, that
// running the generator again over its own output changes nothing.
func TestEquivGeneratedIsFresh(t *testing.T) {
	needGo(t)
	out, err := asyncgen.GenerateFiles("internal/equiv", ".")
	if err != nil {
		t.Fatal(err)
	}
	name, err := filepath.Abs("internal/equiv/funcs_async.go")
	if err != nil {
		t.Fatal(err)
	}
	src, ok := out[name]
	if !ok || len(out) != 1 {
		t.Fatalf("generated %d files, want %s", len(out), name)
	}
	checkClean(t, name, src)
	if !bytes.HasPrefix(src, []byte(asyncgen.Header+"\n")) {
		t.Errorf("%s does not start with %q", name, asyncgen.Header)
	}
	check(t, name, src)
	// Again, checking the intermediate form of every function.
	again, err := asyncgen.Options{Check: true}.GenerateFiles("internal/equiv", ".")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again[name], src) {
		t.Error("a second run generated something else")
	}
}

// TestEquivReferenceIsFresh checks funcs_ref_test.go, the reference
// functions: funcs.go with every async function renamed NameRef and
// future.Await and future.Try replaced by awaitRef and tryRef, which block.
func TestEquivReferenceIsFresh(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "internal/equiv/funcs.go", nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	async := map[string]bool{}
	var decls []ast.Decl
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Doc == nil || !strings.Contains(fn.Doc.Text()+fmtDoc(fn), asyncgen.Directive) {
			continue
		}
		async[fn.Name.Name] = true
		fn.Doc = nil
		fn.Name.Name += "Ref"
		decls = append(decls, fn)
	}
	f.Decls = append(f.Decls[:1:1], decls...) // the imports, then the functions
	f.Comments = nil
	astutil.Apply(f, nil, func(c *astutil.Cursor) bool {
		if sel, ok := c.Node().(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "future" && sel.Sel.Name == "Await" {
				c.Replace(ast.NewIdent("awaitRef"))
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "future" && sel.Sel.Name == "Try" {
				c.Replace(ast.NewIdent("tryRef"))
			}
		}
		return true
	})
	var buf bytes.Buffer
	buf.WriteString("// Code generated by the asyncgen tests from funcs.go; DO NOT EDIT.\n\n")
	if err := format.Node(&buf, fset, f); err != nil {
		t.Fatal(err)
	}
	src := buf.Bytes()
	// The reference may not need every import of funcs.go.
	for _, imp := range []string{`"github.com/blitz-go/blitz/future"`} {
		if !bytes.Contains(src, []byte("future.")) {
			src = bytes.Replace(src, []byte("\t"+imp+"\n"), nil, 1)
		}
	}
	src, err = format.Source(src)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "internal/equiv/funcs_ref_test.go", src)
	if len(async) == 0 {
		t.Fatal("no async functions in funcs.go")
	}
}

// fmtDoc returns the raw text of fn's doc comment lines: Text drops
// directives.
func fmtDoc(fn *ast.FuncDecl) string {
	var b strings.Builder
	for _, c := range fn.Doc.List {
		b.WriteString(c.Text + "\n")
	}
	return b.String()
}

// TestGeneratedIsVetClean runs go vet over the packages that hold
// generated code.
func TestGeneratedIsVetClean(t *testing.T) {
	needGo(t)
	if testing.Short() {
		t.Skip("runs go vet")
	}
	out, err := exec.Command("go", "vet", "./internal/equiv", "./testdata/golden/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
}

// TestRejections generates the package testdata/reject, whose every async
// function uses one construct the generator does not support, and compares
// the messages, positions included, with reject.golden; nothing may be
// generated for it.
func TestRejections(t *testing.T) {
	needGo(t)
	out, err := asyncgen.GenerateFiles("testdata/reject", ".")
	if err == nil {
		t.Fatal("no error")
	}
	if len(out) != 0 {
		t.Errorf("generated %d files from rejected functions", len(out))
	}
	dir, derr := os.Getwd()
	if derr != nil {
		t.Fatal(derr)
	}
	msgs := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	msgs = filepath.ToSlash(msgs) + "\n"
	check(t, "testdata/reject/reject.golden", []byte(msgs))
	for _, line := range strings.Split(strings.TrimSpace(msgs), "\n") {
		if !strings.HasPrefix(line, "testdata/reject/reject.go:") || !strings.Contains(line, ": blitzgen: ") ||
			!strings.Contains(line, " not supported ") || !strings.Contains(line, "; write ") || !strings.HasSuffix(line, " instead") {
			t.Errorf("message not in the form file:line:col: blitzgen: <construct> is not supported ...; write ... instead: %s", line)
		}
	}
}

// TestCommand runs blitzgen as go generate would: over packages whose
// generated files are fresh it writes nothing (-v lists what it writes),
// and over a package with rejected functions it fails with the messages.
func TestCommand(t *testing.T) {
	needGo(t)
	if testing.Short() {
		t.Skip("builds the command")
	}
	out, err := exec.Command("go", "run", "./cmd/blitzgen", "-v", "./internal/equiv", "./testdata/golden/...").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Fatalf("blitzgen over fresh packages: %v\n%s", err, out)
	}
	out, err = exec.Command("go", "run", "./cmd/blitzgen", "./testdata/reject").CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("reject.go:14:2: blitzgen: a go statement is not supported")) {
		t.Fatalf("blitzgen over rejected functions: %v\n%s", err, out)
	}
	// -check writes what a run without it writes: nothing, here.
	out, err = exec.Command("go", "run", "./cmd/blitzgen", "-v", "-check", "./internal/equiv", "./testdata/golden/...").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Fatalf("blitzgen -check over fresh packages: %v\n%s", err, out)
	}
	// -dump prints the form of the function it names and writes nothing.
	out, err = exec.Command("go", "run", "./cmd/blitzgen", "-v", "-dump", "LookupAsync", "./testdata/golden").CombinedOutput()
	if err != nil || !bytes.HasPrefix(out, []byte("func Lookup, golden.go: after pass layout")) || bytes.Contains(out, []byte(".go\n")) {
		t.Fatalf("blitzgen -dump LookupAsync: %v\n%s", err, out)
	}
}

// needGo skips a test that needs the go command (the generator loads
// packages through it, as go generate runs it), where there is none: a test
// binary run on its own, such as a Windows build under Wine.
func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("needs the go command: %v", err)
	}
}

// TestStaleGeneratedFileIsIgnored regenerates a package whose generated
// file no longer compiles (as after its source changed): the errors in it,
// reported through its //line directives at the source's lines, must not
// stop the generator.
func TestStaleGeneratedFileIsIgnored(t *testing.T) {
	needGo(t)
	name := filepath.Join("testdata", "stale", "stale_async.go")
	stale := asyncgen.Header + "\n\npackage stale\n\nfunc DoubleAsync() int {\n//line stale.go:9\n\treturn undefinedSince\n}\n"
	if err := os.WriteFile(name, []byte(stale), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(name) })
	out, err := asyncgen.GenerateFiles("testdata/stale", ".")
	if err != nil {
		t.Fatalf("a stale generated file stopped the generator: %v", err)
	}
	if len(out) != 1 {
		t.Fatalf("generated %d files, want 1", len(out))
	}
	// An error in a source file still stops it.
	broken := filepath.Join("testdata", "stale", "broken.go")
	if err := os.WriteFile(broken, []byte("package stale\n\nvar _ int = \"not an int\"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(broken) })
	if _, err := asyncgen.GenerateFiles("testdata/stale", "."); err == nil || !strings.Contains(err.Error(), "broken.go:3") {
		t.Fatalf("an error in a source file: got %v, want one at broken.go:3", err)
	}
}

// TestFirstRunBeforeConstructorsExist generates a package that calls the
// constructors the generator is about to write (from another async
// function, from a method's caller, a generic one), with no generated file
// yet: the first go generate a user runs on new code.
func TestFirstRunBeforeConstructorsExist(t *testing.T) {
	needGo(t)
	out, err := asyncgen.GenerateFiles("testdata/firstrun", ".")
	if err != nil {
		t.Fatalf("the first run stopped: %v", err)
	}
	if len(out) != 1 {
		t.Fatalf("generated %d files, want 1", len(out))
	}
	for _, src := range out {
		for _, want := range []string{"func greetAsync(", "func (g *Greeter) GreetAsync(", "func firstAsync[T any](", "func allAsync("} {
			if !bytes.Contains(src, []byte(want)) {
				t.Errorf("the generated file lacks %q", want)
			}
		}
	}
}

// TestUnsupportedResultsExplainTheUndefinedConstructor: a package that
// calls the constructor of an async function whose results the generator
// does not take cannot type-check; the run reports the results' refusal
// beside the undefined constructor, not the latter alone.
func TestUnsupportedResultsExplainTheUndefinedConstructor(t *testing.T) {
	needGo(t)
	out, err := asyncgen.GenerateFiles("testdata/unstubbed", ".")
	if err == nil || len(out) != 0 {
		t.Fatalf("generated %d files, error %v; want a refusal", len(out), err)
	}
	for _, want := range []string{"undefined: pairAsync", "unstubbed.go:7:13: blitzgen: these results are not supported in an async function yet"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}

// TestNameConflicts generates a package that declares names its async
// functions' generated code needs (a constructor, a method's constructor,
// a state machine type): each is reported where the user declared it,
// naming the async function, and nothing is generated.
func TestNameConflicts(t *testing.T) {
	needGo(t)
	out, err := asyncgen.GenerateFiles("testdata/conflict", ".")
	if err == nil {
		t.Fatal("no error")
	}
	if len(out) != 0 {
		t.Errorf("generated %d files", len(out))
	}
	for _, want := range []string{
		"conflict.go:13:6: blitzgen: greetAsync is declared here, and the async function greet (conflict.go:8:6) needs that name for its generated constructor; rename one of them",
		"conflict.go:21:12: blitzgen: runAsync is declared here, and the async function run (conflict.go:19:13) needs that name for its generated constructor; rename one of them",
		"conflict.go:27:6: blitzgen: fetchAsyncFuture is declared here, and the async function fetch (conflict.go:24:6) needs that name for its generated state machine type; rename one of them",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "other declaration") {
		t.Errorf("the type checker's message came through:\n%v", err)
	}
}

// TestBuildConstraints generates testdata/constraints, whose async
// functions are in files for one GOOS each and for complementary tags: one
// run generates every file, each in a configuration that compiles its
// source (another GOOS, -tags), and each generated file carries its
// source's constraint, the one of its name included (x_linux_async.go's
// name implies none). A file only for the ignore tag is left alone.
func TestBuildConstraints(t *testing.T) {
	needGo(t)
	out, err := asyncgen.GenerateFiles("testdata/constraints", ".")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"plat_linux_async.go":   "//go:build linux || android",
		"plat_windows_async.go": "//go:build windows",
		"tagged_async.go":       "//go:build foo && !bar",
		"untagged_async.go":     "//go:build !foo || bar",
	}
	got := map[string]string{}
	for name, src := range out {
		if src == nil {
			t.Errorf("%s: marked for removal", name)
			continue
		}
		lines := strings.Split(string(src), "\n")
		got[filepath.Base(name)] = lines[2]
		checkClean(t, name, src)
	}
	if !maps.Equal(got, want) {
		t.Errorf("generated files and their constraints:\n got %q\nwant %q", got, want)
	}
}

// TestStaleGeneratedFilesAreRemoved: a generated file whose source lost
// its last async function, or is gone, is marked for removal (a nil
// entry), and Generate removes it; one beside a source that this run did
// not compile (another platform's) is left alone.
func TestStaleGeneratedFilesAreRemoved(t *testing.T) {
	needGo(t)
	dir := filepath.Join("testdata", "stale")
	write := func(name, content string) string {
		t.Helper()
		p, err := filepath.Abs(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
		return p
	}
	gen := asyncgen.Header + "\n\npackage stale\n"
	write("plain.go", "package stale\n\n// plain had an async function once.\nfunc plain() int { return 1 }\n")
	plainGen := write("plain_async.go", gen)
	goneGen := write("gone_async.go", gen)
	write("other_plan9.go", "package stale\n\nfunc other() {}\n")
	otherGen := write("other_plan9_async.go", gen+"\nfunc otherAsync() {}\n")
	out, err := asyncgen.GenerateFiles(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{plainGen, goneGen} {
		if src, ok := out[name]; !ok || src != nil {
			t.Errorf("%s: not marked for removal", name)
		}
	}
	if _, ok := out[otherGen]; ok {
		t.Errorf("%s: touched, though its source was not compiled", otherGen)
	}
	written, err := asyncgen.Generate(dir, ".")
	for _, name := range written {
		t.Cleanup(func() { os.Remove(name) }) // stale.go's own, written too
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{plainGen, goneGen} {
		if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists (written: %q)", name, written)
		}
	}
	if _, err := os.Stat(otherGen); err != nil {
		t.Errorf("%s: %v", otherGen, err)
	}
}

// TestFirstRunAcrossPackages generates, on new code, a package that
// awaits the async function of another package of its module whose
// generated file does not exist yet (go generate ./... reaches the
// packages in the order of their paths: here the caller first). The
// caller generates; then the callee; then the module builds and runs.
func TestFirstRunAcrossPackages(t *testing.T) {
	needGo(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	var sum []byte
	for _, m := range []string{"future", "waker"} {
		b, err := os.ReadFile(filepath.Join(root, m, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	files := map[string]string{
		"go.mod": "module example.com/cross\n\ngo 1.25.0\n\nrequire (\n\tgithub.com/blitz-go/blitz/future v0.1.0\n\tgithub.com/blitz-go/blitz/waker v0.1.0\n)\n\n" +
			"replace (\n\tgithub.com/blitz-go/blitz/future => " + filepath.Join(root, "future") + "\n\tgithub.com/blitz-go/blitz/waker => " + filepath.Join(root, "waker") + "\n)\n",
		"go.sum": string(sum),
		"a/a.go": "package a\n\nimport (\n\t\"example.com/cross/z\"\n\t\"github.com/blitz-go/blitz/future\"\n)\n\n" +
			"// Quadruple awaits z's async function twice.\n//\n//blitz:async\nfunc Quadruple(n int) int {\n\tm := future.Await(z.TwiceAsync(n))\n\treturn future.Await(z.TwiceAsync(m))\n}\n",
		"z/z.go": "package z\n\nimport \"example.com/cross/z/inner\"\n\n" +
			"// Twice doubles n through inner.\n//\n//blitz:async\nfunc Twice(n int) int { return inner.Add(n, n) }\n",
		"z/inner/inner.go": "package inner\n\nfunc Add(a, b int) int { return a + b }\n",
		"main.go": "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\n\t\"example.com/cross/a\"\n\t\"github.com/blitz-go/blitz/future\"\n)\n\n" +
			"func main() { v, err := future.Block(context.Background(), a.QuadrupleAsync(5)); fmt.Println(v, err) }\n",
	}
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for _, pkg := range []string{"a", "z"} {
		written, err := asyncgen.Generate(filepath.Join(dir, pkg), ".")
		if err != nil {
			t.Fatalf("generating %s before the other's generated file exists: %v", pkg, err)
		}
		if len(written) != 1 {
			t.Fatalf("generating %s wrote %v; want one file", pkg, written)
		}
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "20 <nil>" {
		t.Fatalf("printed %q; want 20 <nil>", got)
	}
}
