// Command loc counts the lines of the servers in the examples, as the table
// in BENCHMARKS.md reports them: for each server (echo, lookup) and each way
// of writing it (plain Go, hand-written blitz state machines, a blitz async
// function), the lines of the connection handler and of the accept loop and
// main, in the source its author writes (never a generated file).
//
// A line counts if it holds code: blank lines and comment lines do not,
// except directives (//blitz:async, //go:generate), which the generated
// variant needs. The accept loop and main are the declarations named main,
// serve and acceptLoop (with its methods); every other declaration is the
// handler's (for lookup, the lookup itself too). The package clause and
// imports count only in the total. Code shared by the variants (the lookup
// servers' data and reply format, in examples/lookup/internal/kv) counts in
// none.
//
// Run it from the repository's root:
//
//	go run ./examples/internal/loc
//
// With -twins it prints instead the table of examples/twins: for each
// program, the code lines of its async version and of its goroutine
// version (every non-test Go file of the version's directory but the
// generated ones, package clause and imports included), and their ratio;
// then the same without main.go (flags, runtime and signal set-up).
//
//	go run ./examples/internal/loc -twins
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// variant is one way of writing a server, in one file.
type variant struct {
	server, name, file string
}

var variants = []variant{
	{"echo", "plain Go", "examples/echo/variants/plain/main.go"},
	{"echo", "hand-written blitz", "examples/echomachine/main.go"},
	{"echo", "async blitz (generated)", "examples/echo/main.go"},
	{"lookup", "plain Go", "examples/lookup/variants/plain/main.go"},
	{"lookup", "hand-written blitz", "examples/lookup/variants/handwritten/main.go"},
	{"lookup", "async blitz (generated)", "examples/lookup/main.go"},
}

// Counts are the lines of one variant.
type Counts struct {
	Handler, Serve, Total int
}

func main() {
	twins := flag.Bool("twins", false, "print the table of examples/twins")
	flag.Parse()
	if *twins {
		if err := printTwins(os.Stdout, "examples/twins"); err != nil {
			log.Fatal(err)
		}
		return
	}
	fmt.Println("| server | written as | handler | accept loop + main | whole file | handler / plain Go | whole file / plain Go |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	var plain Counts
	for _, v := range variants {
		src, err := os.ReadFile(v.file)
		if err != nil {
			log.Fatal(err)
		}
		c, err := Count(v.file, src)
		if err != nil {
			log.Fatal(err)
		}
		if v.name == "plain Go" {
			plain = c
		}
		fmt.Printf("| %s | %s ([source](%s)) | %d | %d | %d | %.2fx | %.2fx |\n", v.server, v.name, v.file,
			c.Handler, c.Serve, c.Total, float64(c.Handler)/float64(plain.Handler), float64(c.Total)/float64(plain.Total))
	}
}

// Count counts the lines of the Go source src.
func Count(name string, src []byte) (Counts, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return Counts{}, err
	}
	lines := strings.Split(string(src), "\n")
	code := func(from, to token.Pos) int { // the code lines of [from, to]
		n := 0
		for i := fset.Position(from).Line; i <= fset.Position(to).Line; i++ {
			if isCode(lines[i-1]) {
				n++
			}
		}
		return n
	}
	var c Counts
	c.Total = code(f.FileStart, f.FileEnd)
	for _, d := range f.Decls {
		var n int
		serve := false
		switch d := d.(type) {
		case *ast.FuncDecl:
			n = code(d.Pos(), d.End())
			if d.Doc != nil {
				n += code(d.Doc.Pos(), d.Doc.End())
			}
			serve = isServe(d.Name.Name) || d.Recv != nil && isServe(recvName(d.Recv))
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			n = code(d.Pos(), d.End())
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok && isServe(ts.Name.Name) {
					serve = true
				}
			}
		}
		if serve {
			c.Serve += n
		} else {
			c.Handler += n
		}
	}
	// Directives outside declarations (//go:generate) are the handler's:
	// the generated variant needs them for its handler.
	for _, g := range f.Comments {
		for _, cm := range g.List {
			if isDirective(cm.Text) && !insideDecl(f, cm.Pos()) {
				c.Handler++
			}
		}
	}
	return c, nil
}

func isServe(name string) bool { return name == "main" || name == "serve" || name == "acceptLoop" }

func recvName(fl *ast.FieldList) string {
	t := fl.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func insideDecl(f *ast.File, p token.Pos) bool {
	for _, d := range f.Decls {
		from := d.Pos()
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
			from = fd.Doc.Pos()
		}
		if from <= p && p < d.End() {
			return true
		}
	}
	return false
}

// isCode reports whether a line holds code: not blank, not only a comment,
// or a directive.
func isCode(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && (!strings.HasPrefix(t, "//") || isDirective(t))
}

func isDirective(t string) bool {
	return strings.HasPrefix(t, "//go:") || strings.HasPrefix(t, "//blitz:")
}

// TwinCounts are the code lines of one version of a program of
// examples/twins: in all its files, and in main.go.
type TwinCounts struct{ Total, Main int }

// CountDir counts the code lines of the non-test, non-generated Go files of
// dir.
func CountDir(dir string) (TwinCounts, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return TwinCounts{}, err
	}
	var tc TwinCounts
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return TwinCounts{}, err
		}
		if bytes.HasPrefix(src, []byte("// Code generated ")) {
			continue
		}
		c, err := Count(f, src)
		if err != nil {
			return TwinCounts{}, err
		}
		tc.Total += c.Total
		if filepath.Base(f) == "main.go" {
			tc.Main += c.Total
		}
	}
	return tc, nil
}

// Twin is a program of examples/twins and the counts of its two versions.
type Twin struct {
	Name              string
	Async, Goroutines TwinCounts
}

// Twins counts every program under root (examples/twins), in name order.
func Twins(root string) ([]Twin, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "*", "async"))
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	var out []Twin
	for _, d := range dirs {
		t := Twin{Name: filepath.Base(filepath.Dir(d))}
		if t.Async, err = CountDir(d); err != nil {
			return nil, err
		}
		if t.Goroutines, err = CountDir(filepath.Join(filepath.Dir(d), "goroutines")); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// printTwins prints the table of the programs under root.
func printTwins(w io.Writer, root string) error {
	twins, err := Twins(root)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "| program | async lines | goroutine lines | async / goroutines | async without main.go | goroutines without main.go | ratio without main.go |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	var a, g TwinCounts
	for _, t := range twins {
		printTwin(w, t.Name, t.Async, t.Goroutines)
		a.Total, a.Main = a.Total+t.Async.Total, a.Main+t.Async.Main
		g.Total, g.Main = g.Total+t.Goroutines.Total, g.Main+t.Goroutines.Main
	}
	printTwin(w, "all", a, g)
	return nil
}

func printTwin(w io.Writer, name string, a, g TwinCounts) {
	fmt.Fprintf(w, "| %s | %d | %d | %.2f | %d | %d | %.2f |\n", name, a.Total, g.Total, float64(a.Total)/float64(g.Total),
		a.Total-a.Main, g.Total-g.Main, float64(a.Total-a.Main)/float64(g.Total-g.Main))
}
