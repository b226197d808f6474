package asyncgen

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/packages"
)

// directCalls rejects every call, in the source files of pkg, of one of
// its async functions as written: the direct-style function compiles, but
// its awaits panic (future.ErrAwaitOutsideGenerated) when it runs, so a
// call of it is a mistake for a call of its constructor, caught here
// rather than at run time.
func directCalls(pkg *packages.Package) []error {
	async := map[types.Object]*ast.FuncDecl{}
	for _, file := range pkg.Syntax {
		if isGenerated(file) {
			continue
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && isAsync(fn) {
				if obj := pkg.TypesInfo.Defs[fn.Name]; obj != nil {
					async[obj] = fn
				}
			}
		}
	}
	if len(async) == 0 {
		return nil
	}
	var errs []error
	for _, file := range pkg.Syntax {
		if isGenerated(file) {
			continue
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			callee := staticCallee(pkg.TypesInfo, call.Fun)
			if callee == nil {
				return true
			}
			fn, ok := async[callee.Origin()]
			if !ok {
				return true
			}
			ctor, _ := generatedNames(fn)
			if t := recvTypeName(fn); t != "" {
				ctor = "x." + ctor[len(t)+1:]
			}
			errs = append(errs, &Error{Pos: pkg.Fset.Position(call.Pos()), Msg: "a direct call of the async function " + fn.Name.Name +
				" is not supported (it runs only as its generated future, and its awaits panic when it is called); write future.Await(" + ctor +
				"(...)) in an async function, or blitz.BlockOn or blitz.SpawnOn of " + ctor + "(...) elsewhere, instead"})
			return true
		})
	}
	return errs
}
