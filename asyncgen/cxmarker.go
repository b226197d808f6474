package asyncgen

// The context pass: future.Cx() is the Context of the poll running the
// async function, which is Poll's own parameter in the generated code.

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
)

// isCx reports whether obj is future.Cx.
func isCx(obj types.Object) bool { return isFutureFunc(obj, "Cx") }

// cxCall reports whether e is a call of future.Cx.
func (g *fnCtx) cxCall(e ast.Node) bool {
	call, ok := e.(*ast.CallExpr)
	return ok && isCx(g.calledFunc(call.Fun))
}

// replaceCx is pass 4c (context): every call of future.Cx in the body
// becomes Poll's context parameter (g.cx), with the call's type. A
// deferred function literal may run from Cancel, where there is no poll:
// a call there is rejected, as is future.Cx used other than called.
func (g *gen) replaceCx() {
	deferred := map[*ast.FuncLit]bool{}
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		if d, ok := n.(*ast.DeferStmt); ok {
			if lit, ok := ast.Unparen(d.Call.Fun).(*ast.FuncLit); ok {
				deferred[lit] = true
			}
		}
		return true
	})
	inDeferred := 0
	astutil.Apply(g.fn.Body, func(c *astutil.Cursor) bool {
		switch n := c.Node().(type) {
		case *ast.FuncLit:
			if deferred[n] {
				inDeferred++
			}
		case *ast.CallExpr:
			if !g.cxCall(n) {
				return true
			}
			if inDeferred > 0 {
				g.reject(n.Pos(), "future.Cx in a deferred function literal is not supported in an async function (the deferred call may run when the future is cancelled, outside any poll); write ctx := future.Cx() before the defer statement, or call what needs it before returning, instead")
				return false
			}
			id := &ast.Ident{NamePos: n.Pos(), Name: g.cx}
			g.info.Types[id] = g.info.Types[n]
			c.Replace(id)
			return false
		case *ast.Ident: // a dot import's Cx not called (a call was replaced above)
			if isCx(g.info.Uses[n]) {
				g.reject(n.Pos(), "future.Cx as a value is not supported in an async function; write a call future.Cx() instead")
			}
		case *ast.SelectorExpr:
			if isCx(g.info.Uses[n.Sel]) {
				g.reject(n.Pos(), "future.Cx as a value is not supported in an async function; write a call future.Cx() instead")
				return false
			}
		}
		return true
	}, func(c *astutil.Cursor) bool {
		if lit, ok := c.Node().(*ast.FuncLit); ok && deferred[lit] {
			inDeferred--
		}
		return true
	})
}
