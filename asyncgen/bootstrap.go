package asyncgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// The first run on new code. A package that calls a constructor the
// generator has yet to write (main calls greetAsync, one async function
// awaits another's) does not compile before the generator has run, and the
// generator needs the package's types. So the packages are first parsed
// only, and each generated file is replaced, for the type-checked load, by
// a stub that declares the constructors its source's async functions will
// have: the same names, parameters and type parameters, and the future
// type of their results. The constructors' callers then type-check with
// their real types, before any generated file exists and whatever state
// (stale, broken) one is in. The stubs are never written.

// constructorStubs returns the overlay of stub generated files for the
// packages patterns name: generated file path -> stub source; and, for the
// source files with a select over futures, their rewritten source, with
// the selects it could not rewrite (see selectsugar.go). Files whose
// async functions cannot be stubbed (results the generator refuses) are
// left out; the generator reports those functions itself.
func constructorStubs(c buildConfig, dir string, patterns ...string) (overlay map[string][]byte, refused map[string]string, unstubbed map[string][]error, err error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedImports | packages.NeedModule, Dir: dir, Env: c.env(), BuildFlags: c.flags(), Tests: true}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("blitzgen: %w", err)
	}
	overlay, refused, unstubbed = map[string][]byte{}, map[string]string{}, map[string][]error{}
	deps, err := localDeps(cfg, pkgs)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, pkg := range deps {
		for _, file := range pkg.Syntax {
			if isGenerated(file) {
				continue
			}
			gen := genName(pkg.Fset.File(file.Pos()).Name())
			if _, err := os.Stat(gen); err == nil {
				continue // generated already: its real declarations are kept
			}
			if stub, _ := stubFile(pkg.Fset, file); stub != nil {
				overlay[gen] = stub
			}
		}
	}
	for _, pkg := range pkgs {
		for _, file := range pkg.Syntax {
			if isGenerated(file) {
				continue
			}
			name := pkg.Fset.File(file.Pos()).Name()
			stub, refusals := stubFile(pkg.Fset, file)
			if stub != nil {
				overlay[genName(name)] = stub
			}
			if len(refusals) > 0 {
				unstubbed[name] = refusals
			}
			if _, done := overlay[name]; done {
				continue // a file of a package and of its test variant
			}
			if err := selectSugar(pkg.Fset, file, overlay, refused); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return overlay, refused, unstubbed, nil
}

// localDeps loads, parsed only, the packages that pkgs import, directly
// or through one another, from the modules pkgs belong to, and that are
// not among pkgs: the constructors of their async functions whose
// generated file does not exist yet are stubbed too, so that a package
// awaiting another package's async function generates before that
// package's generated file exists (go generate runs the packages in the
// order of their paths, not of their imports).
func localDeps(cfg *packages.Config, pkgs []*packages.Package) ([]*packages.Package, error) {
	var modules []string
	loaded := map[string]bool{}
	for _, pkg := range pkgs {
		loaded[pkg.PkgPath] = true
		if m := pkg.Module; m != nil && m.Path != "" && !slices.Contains(modules, m.Path) {
			modules = append(modules, m.Path)
		}
	}
	local := func(path string) bool {
		for _, m := range modules {
			if path == m || strings.HasPrefix(path, m+"/") {
				return true
			}
		}
		return false
	}
	depCfg := *cfg
	depCfg.Tests = false
	var deps []*packages.Package
	for frontier := pkgs; ; {
		var next []string
		for _, pkg := range frontier {
			for path := range pkg.Imports {
				if local(path) && !loaded[path] {
					loaded[path] = true
					next = append(next, path)
				}
			}
		}
		if len(next) == 0 {
			return deps, nil
		}
		slices.Sort(next)
		more, err := packages.Load(&depCfg, next...)
		if err != nil {
			return nil, fmt.Errorf("blitzgen: %w", err)
		}
		deps = append(deps, more...)
		frontier = more
	}
}

// stubFuture is the import name of the future package in a stub, chosen
// not to collide with the source's own import names.
const stubFuture = "blitzgenStubFuture"

// stubFile is the stub of the generated file of file, nil if file has no
// async function. The stub keeps the source's imports (the parameter types
// name them as the source does); those it does not use are type errors in
// a generated file, which the generator ignores.
func stubFile(fset *token.FileSet, file *ast.File) ([]byte, []error) {
	var decls bytes.Buffer
	var refusals []error
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !isAsync(fn) {
			continue
		}
		res, ok := stubResult(fset, fn.Type.Results)
		if !ok {
			refusals = append(refusals, &Error{Pos: fset.Position(fn.Type.Results.Pos()), Msg: unsupportedResults})
			continue
		}
		decls.WriteString("func ")
		if fn.Recv != nil {
			decls.WriteString("(" + printFields(fset, fn.Recv) + ") ")
		}
		decls.WriteString(fn.Name.Name + "Async")
		if fn.Type.TypeParams != nil {
			decls.WriteString("[" + printFields(fset, fn.Type.TypeParams) + "]")
		}
		decls.WriteString("(" + printFields(fset, fn.Type.Params) + ") " + stubFuture + ".Future[" + res + "] { panic(0) }\n")
	}
	if decls.Len() == 0 {
		return nil, refusals
	}
	var b bytes.Buffer
	b.WriteString(Header + "\n\npackage " + file.Name.Name + "\n\n")
	b.WriteString("import " + stubFuture + " \"github.com/blitz-go/blitz/future\"\n")
	for _, imp := range file.Imports {
		b.WriteString("import " + printNode(fset, imp) + "\n")
	}
	b.WriteString("\n")
	b.Write(decls.Bytes())
	return b.Bytes(), refusals
}

// stubResult is the type a constructor's future yields for results, as
// the generator shapes it: struct{} for none, T for one, Result[T] for
// (T, error); ok is false for the lists it refuses.
func stubResult(fset *token.FileSet, results *ast.FieldList) (string, bool) {
	var types []ast.Expr
	if results != nil {
		for _, f := range results.List {
			for range max(len(f.Names), 1) {
				types = append(types, f.Type)
			}
		}
	}
	switch len(types) {
	case 0:
		return "struct{}", true
	case 1:
		return printNode(fset, types[0]), true
	case 2:
		if id, ok := types[1].(*ast.Ident); ok && id.Name == "error" {
			return stubFuture + ".Result[" + printNode(fset, types[0]) + "]", true
		}
	}
	return "", false
}

// printFields prints a parameter or type parameter list without its
// parentheses or brackets.
func printFields(fset *token.FileSet, fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	parts := make([]string, 0, len(fl.List))
	for _, f := range fl.List {
		names := make([]string, len(f.Names))
		for i, id := range f.Names {
			names[i] = id.Name
		}
		p := printNode(fset, f.Type)
		if len(names) > 0 {
			p = strings.Join(names, ", ") + " " + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// printNode prints n as Go source.
func printNode(fset *token.FileSet, n any) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		panic(err) // the nodes come from the parser
	}
	return b.String()
}

// nameConflicts returns an error for each async function of the source
// files of pkg whose constructor or state machine type would take a name
// the package's source already declares at package level (a function, a
// type, a variable or a constant; for a method, a method of the same
// receiver type): the generated file would not compile, and the type
// checker's "other declaration" would not say why.
func nameConflicts(pkg *packages.Package) []error {
	declared := map[string]token.Pos{} // name, or Recv.name for a method
	for _, file := range pkg.Syntax {
		if isGenerated(file) {
			continue
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if t := recvTypeName(d); t != "" {
					declared[t+"."+d.Name.Name] = d.Name.Pos()
				} else if d.Recv == nil {
					declared[d.Name.Name] = d.Name.Pos()
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						declared[spec.Name.Name] = spec.Name.Pos()
					case *ast.ValueSpec:
						for _, id := range spec.Names {
							declared[id.Name] = id.Pos()
						}
					}
				}
			}
		}
	}
	var errs []error
	for _, file := range pkg.Syntax {
		if isGenerated(file) {
			continue
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !isAsync(fn) {
				continue
			}
			ctor, machine := generatedNames(fn)
			for _, name := range []string{ctor, machine} {
				if pos, ok := declared[name]; ok {
					errs = append(errs, &Error{Pos: pkg.Fset.Position(pos), Msg: fmt.Sprintf(
						"%s is declared here, and the async function %s (%s) needs that name for its generated %s; rename one of them",
						strings.TrimPrefix(name, recvTypeName(fn)+"."), fn.Name.Name, shortPos(pkg.Fset.Position(fn.Name.Pos())), kindOfName(name, ctor))})
				}
			}
		}
	}
	return errs
}

// generatedNames returns the keys, as nameConflicts keys declarations, of
// the constructor and the state machine type that fn's generated code
// declares: names the name pass (nameMachine) gives them.
func generatedNames(fn *ast.FuncDecl) (ctor, machine string) {
	ctor = fn.Name.Name + "Async"
	if t := recvTypeName(fn); t != "" {
		ctor = t + "." + ctor
	}
	return ctor, machineName(fn)
}

func kindOfName(name, ctor string) string {
	if name == ctor {
		return "constructor"
	}
	return "state machine type"
}

// shortPos is p with its file's base name, for a position quoted in a
// message about another.
func shortPos(p token.Position) string {
	return fmt.Sprintf("%s:%d:%d", filepath.Base(p.Filename), p.Line, p.Column)
}
