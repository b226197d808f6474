package asyncgen

// Helpers that every pass uses, reading only the function's context
// (fnCtx) and its file's (fileGen).

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
)

func (g *fnCtx) pos(p token.Pos) token.Position { return g.fset.Position(p) }

// fresh returns a name based on base that no identifier of the function
// uses, and reserves it.
func (g *fnCtx) fresh(base string) string { return freshIn(g.names, base) }

func freshIn(names map[string]bool, base string) string {
	name := base
	for i := 2; names[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	names[name] = true
	return name
}

// isAwait reports whether e is a call of future.Await.
func (g *fnCtx) isAwait(e ast.Expr) (*ast.CallExpr, bool) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return nil, false
	}
	fun := ast.Unparen(call.Fun)
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil, false
	}
	if !isMarker(g.info.Uses[id]) {
		return nil, false
	}
	return call, true
}

// isMarker reports whether obj is future.Await or future.Try.
func isMarker(obj types.Object) bool { return isFutureFunc(obj, "Await") || isFutureFunc(obj, "Try") }

// isFutureFunc reports whether obj is the function name of package future.
func isFutureFunc(obj types.Object, name string) bool {
	fn, ok := obj.(*types.Func)
	return ok && fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == futurePath && fn.Name() == name
}

// isTry reports whether call, a marker call, is future.Try: it awaits a
// Future[Result[T]] and yields (T, error).
func (g *fnCtx) isTry(call *ast.CallExpr) bool {
	_, tuple := g.info.TypeOf(call).(*types.Tuple)
	return tuple
}

// markerName is the name the user wrote for the marker call: future.Await
// or future.Try, for messages.
func (g *fnCtx) markerName(call *ast.CallExpr) string {
	if g.isTry(call) {
		return "future.Try"
	}
	return "future.Await"
}

// hasAwait reports whether n contains a call of future.Await anywhere,
// function literals included.
func (g *fnCtx) hasAwait(n ast.Node) bool {
	if n == nil {
		return false
	}
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if found {
			return false
		}
		if e, ok := n.(ast.Expr); ok {
			if _, ok := g.isAwait(e); ok {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// awaitedType is the Future[T] that a marker call awaits: the parameter
// type of its instantiated signature (Future[Result[T]] for Try).
func (g *fnCtx) awaitedType(call *ast.CallExpr) types.Type {
	return g.info.TypeOf(call.Fun).(*types.Signature).Params().At(0).Type()
}

// storageRoot returns the variable whose storage e is part of (e is the
// variable, one of its struct fields or array elements, at any depth, with
// no pointer between), or nil.
func (g *fnCtx) storageRoot(e ast.Expr) *ast.Ident {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			sel, ok := g.info.Selections[x]
			if !ok || sel.Kind() != types.FieldVal || sel.Indirect() {
				return nil
			}
			if _, ptr := g.info.TypeOf(x.X).Underlying().(*types.Pointer); ptr {
				return nil
			}
			e = x.X
		case *ast.IndexExpr:
			if _, arr := g.info.TypeOf(x.X).Underlying().(*types.Array); !arr {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

func (g *fnCtx) print(n ast.Node) string {
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, g.fset, n); err != nil {
		panic(err) // printing an AST to a buffer does not fail
	}
	return buf.String()
}

func (g *fnCtx) zero(t types.Type) string {
	if _, ok := t.(*types.TypeParam); ok {
		return "*new(" + g.typeString(t) + ")"
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false"
		case u.Info()&types.IsString != 0:
			return `""`
		case u.Info()&types.IsNumeric != 0:
			if _, named := t.(*types.Named); named {
				return g.typeString(t) + "(0)"
			}
			return "0"
		}
		return "nil"
	case *types.Struct, *types.Array:
		return g.typeString(t) + "{}"
	}
	return "nil"
}

// namedType is the type expression of the i-th named result.
func (g *fnCtx) namedType(i int) ast.Expr {
	for _, f := range g.fn.Type.Results.List {
		if i < len(f.Names) {
			return f.Type
		}
		i -= len(f.Names)
	}
	return nil
}

func (g *fnCtx) line(p token.Pos) string {
	pos := g.pos(p)
	return fmt.Sprintf("//line %s:%d\n", filepath.Base(pos.Filename), pos.Line)
}
