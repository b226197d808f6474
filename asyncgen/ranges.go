package asyncgen

// Range loops without copies. A lowered range loop evaluates its range
// expression once into a field (rangeValue) and counts in a field of its
// own (rangeIndex), as Go's hidden variables do. Both are copies a loop
// often does not need:
//
//   - A range expression that is a variable of the function (a slice, a
//     string, an integer or a pointer to an array, not an array, which Go
//     copies) that nothing assigns, addresses or captures anywhere in the
//     function is ranged as it is: it holds the value Go would have copied
//     for the whole loop.
//   - A key variable that the loop declares (:=) and that its body only
//     reads (no assignment, no address, no pointer method, no function
//     literal) is the index: it holds the hidden index at every point
//     where the body can see it.
//
// The key and value variables the loop declares are assigned in the loop's
// head block, a case of its own, and are locals of that case unless they
// live longer (hoisting makes them fields) or the body declares another
// variable of the same name, which Go's scopes allow and one case does not.

import (
	"go/ast"
	"go/token"
	"go/types"
)

// rangeParts decides whether s, a range loop of the given kind, ranges its
// expression directly and whether its key is its index (see the top of
// this file).
func (g *gen) rangeParts(s *ast.RangeStmt, kind string) (direct, keyIdx bool) {
	_, ptr := coreType(g.info.TypeOf(s.X)).(*types.Pointer)
	if id, ok := ast.Unparen(s.X).(*ast.Ident); ok && (kind != "array" || ptr) {
		if v, ok := g.info.Uses[id].(*types.Var); ok && g.ownVar(v) {
			direct = g.onlyRead(v, g.fn.Body)
		}
	}
	if id, ok := s.Key.(*ast.Ident); ok && s.Tok == token.DEFINE && id.Name != "_" {
		if v, ok := g.info.Defs[id].(*types.Var); ok {
			keyIdx = g.onlyRead(v, s.Body)
		}
	}
	return direct, keyIdx
}

// ownVar reports whether v is a variable of the function: a local, a
// parameter, a named result or the receiver (not a field, a package-level
// variable or a temporary of the linearizer).
func (g *gen) ownVar(v *types.Var) bool {
	return !v.IsField() && v.Pkg() == g.pkg && v.Parent() != g.pkg.Scope() && !g.synth[v] &&
		v.Pos() >= g.fn.Pos() && v.Pos() < g.fn.End()
}

// onlyRead reports whether every use of v within n reads it: none assigns
// it (=, op=, ++, a range's =), takes its address (&, a pointer method, a
// slice of an array) or is in a function literal, directly or through its
// fields and array elements.
func (g *gen) onlyRead(v *types.Var, n ast.Node) bool { return g.readsOnly(v, n, false) }

// readsOnly is onlyRead, with the uses of v in function literals checked
// like the others if inLits (else any of them fails).
func (g *gen) readsOnly(v *types.Var, n ast.Node, inLits bool) bool {
	ok := true
	written := map[*ast.Ident]bool{}
	write := func(e ast.Expr) {
		if e == nil {
			return
		}
		if id := g.storageRoot(e); id != nil {
			written[id] = true
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			if inLits {
				return true
			}
			ast.Inspect(n, func(m ast.Node) bool {
				if id, isID := m.(*ast.Ident); isID && g.info.Uses[id] == v {
					ok = false
				}
				return ok
			})
			return false
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				write(l)
			}
		case *ast.IncDecStmt:
			write(n.X)
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				write(n.Key)
				write(n.Value)
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				write(n.X)
			}
		case *ast.SliceExpr:
			if _, arr := g.info.TypeOf(n.X).Underlying().(*types.Array); arr {
				write(n.X)
			}
		case *ast.SelectorExpr:
			if sel, isSel := g.info.Selections[n]; isSel && sel.Kind() == types.MethodVal {
				_, ptrRecv := sel.Obj().Type().(*types.Signature).Recv().Type().(*types.Pointer)
				_, ptrX := g.info.TypeOf(n.X).Underlying().(*types.Pointer)
				if ptrRecv && !ptrX {
					write(n.X)
				}
			}
		case *ast.Ident:
			if written[n] && g.info.Uses[n] == v {
				ok = false
			}
		}
		return true
	})
	return ok
}

// redeclaredIn reports whether body declares something else named like id.
func (g *gen) redeclaredIn(id *ast.Ident, body ast.Node) bool {
	v := g.info.Defs[id]
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if x, ok := n.(*ast.Ident); ok && x.Name == id.Name {
			if obj, def := g.info.Defs[x]; def && obj != v {
				found = true
			}
		}
		return !found
	})
	return found
}

// rangeIndex is the expression of l's index.
func (g *emitter) rangeIndex(l *rangeLoop) string {
	if l.keyIdx {
		return g.rewrite(l.s.Key, nil)
	}
	return g.recv + "." + l.idx
}

// rangeValue is the expression of the value l ranges over.
func (g *emitter) rangeValue(l *rangeLoop) string {
	if l.direct {
		return g.rewrite(l.x, nil)
	}
	return g.recv + "." + l.rng
}

// rangeAssign is the token that assigns e, the key or the value of s, in
// the head block: := for a variable s declares that stays a local of that
// block.
func (g *emitter) rangeAssign(s *ast.RangeStmt, e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok && s.Tok == token.DEFINE {
		v, _ := g.info.Defs[id].(*types.Var)
		if _, hoisted := g.hoisted[v]; !hoisted && !g.isCell(v) {
			return ":="
		}
	}
	return "="
}
