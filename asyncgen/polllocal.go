package asyncgen

// Locals of Poll. A variable used by two blocks is not a local of one case
// of Poll's switch; it need not be a field either, if its value never has
// to survive a suspension: say a value tested by a switch's dispatch and
// read by the clause it selects, two blocks with no await between them.
// Such a variable is declared once at the top of Poll (var v T) and lives
// for one call of Poll, which runs block after block until an await
// suspends it or the function returns.
//
// The test is a conservative liveness: Poll starts at block 0 or at a block
// that resumes an await; from each such entry, following every transfer
// that an item may make (jumps, branches, dispatches, loop exits, and for
// a copied statement every break and continue target it may reach), the
// walk must meet a declaration of the variable before any other use. A
// declaration (x := e, var x T, an await's x :=, a range loop's :=) gives
// it a new value, so whatever came before does not matter; so does an
// assignment of a value that does not read the old one (x = e, a
// redeclaring :=, an await's x = or n, err = future.Try(f), see assigns). Variables whose
// address is taken or that a function literal names stay fields (a cell,
// a closure outliving the call, or a pointer kept across an await would
// see the local of another call), as do the linearizer's temporaries, the
// implicit variables of type switches and variables an unevaluated array
// range names (that name is not printed, and the local would be unused).

import (
	"go/ast"
	"go/token"
	"go/types"
)

// pollLocalOK reports whether v, used by more than one block, can be a
// local of Poll.
func (g *gen) pollLocalOK(v *types.Var) bool {
	if g.synth[v] || !g.ownVar(v) || g.addressed(v) || g.inUnevaluatedRange(v) {
		return false
	}
	if _, ok := g.awLocals[v]; ok {
		return false
	}
	return !g.liveAtEntry(v)
}

// addPollLocal makes v a local of Poll, under its own name if the function
// names nothing else so (another variable, or a package-level name that
// the local would shadow in the other cases), else under a fresh one.
func (g *gen) addPollLocal(v *types.Var) {
	name := v.Name()
	other := false
	ast.Inspect(g.fn, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			obj := g.info.Defs[id]
			if obj == nil {
				obj = g.info.Uses[id]
			}
			if obj != types.Object(v) {
				other = true
			}
		}
		return !other
	})
	if other {
		name = g.fresh(name)
	}
	for _, other := range g.pollList {
		if g.hoisted[other] == name {
			name = g.fresh(name)
		}
	}
	g.hoisted[v] = name
	g.pollLocal[v] = true
	g.pollList = append(g.pollList, v)
}

// varRef is how Poll refers to hoisted variable v: f.x, or x for a local
// of Poll.
func (g *emitter) varRef(v *types.Var) string {
	if g.pollLocal[v] {
		return g.hoisted[v]
	}
	return g.recv + "." + g.hoisted[v]
}

// addressed reports whether the function takes v's address (&, a pointer
// method, a slice of an array) or names it in a function literal.
func (g *gen) addressed(v *types.Var) bool {
	found := false
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		if found {
			return false
		}
		var root ast.Expr
		switch n := n.(type) {
		case *ast.FuncLit:
			ast.Inspect(n, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && g.info.Uses[id] == v {
					found = true
				}
				return !found
			})
			return false
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				root = n.X
			}
		case *ast.SliceExpr:
			if _, arr := g.info.TypeOf(n.X).Underlying().(*types.Array); arr {
				root = n.X
			}
		case *ast.SelectorExpr:
			if sel, ok := g.info.Selections[n]; ok && sel.Kind() == types.MethodVal {
				_, ptrRecv := sel.Obj().Type().(*types.Signature).Recv().Type().(*types.Pointer)
				_, ptrX := g.info.TypeOf(n.X).Underlying().(*types.Pointer)
				if ptrRecv && !ptrX {
					root = n.X
				}
			}
		}
		if root != nil {
			if id := g.storageRoot(root); id != nil && g.info.Uses[id] == v {
				found = true
			}
		}
		return !found
	})
	return found
}

// inUnevaluatedRange reports whether v is named by the range expression of
// a lowered range loop over an array (which may not be evaluated).
func (g *gen) inUnevaluatedRange(v *types.Var) bool {
	found := false
	for _, l := range g.loops {
		rs, ok := l.(*ast.RangeStmt)
		if !ok {
			continue
		}
		if _, arr := coreType(g.info.TypeOf(rs.X)).(*types.Array); !arr {
			continue
		}
		ast.Inspect(rs.X, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && g.info.Uses[id] == v {
				found = true
			}
			return !found
		})
	}
	return found
}

// liveAtEntry reports whether some path from an entry of Poll (block 0, or
// a block that resumes an await) may reach a use of v before a
// declaration of v (see the top of this file).
func (g *gen) liveAtEntry(v *types.Var) bool {
	seen := map[*block]bool{}
	var work []*block
	push := func(b *block) {
		if b != nil && !seen[b] {
			seen[b] = true
			work = append(work, b)
		}
	}
	for _, b := range g.blocks {
		if b.id == 0 || b.resume != nil {
			push(b)
		}
	}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		for _, it := range b.items {
			if g.itemDeclares(it, v) {
				break
			}
			if g.itemUses(it, v) {
				return true
			}
			for _, s := range g.itemTargets(it) {
				push(s)
			}
		}
	}
	return false
}

// itemDeclares reports whether item it declares v, or gives it a new value
// that does not depend on the old one (see assigns).
func (g *gen) itemDeclares(it any, v *types.Var) bool {
	switch it := it.(type) {
	case stmtItem:
		if a, ok := it.s.(*ast.AssignStmt); ok && g.assigns(a.Tok, a.Lhs, a.Rhs, v) {
			return true
		}
		return g.declares(it.s, v)
	case *awaitResume:
		if it.try != nil {
			// x, err := future.Try(f) (or =): the awaited future's
			// outcome, made by the block that started the await.
			return g.assigns(it.try.Tok, it.try.Lhs, nil, v)
		}
		if it.lhs != nil && it.op == token.ASSIGN && g.info.Uses[it.lhs] == v {
			return true // x = future.Await(f)
		}
		return it.lhs != nil && it.define && g.info.Defs[it.lhs] == v
	case rangeHead:
		if it.l.s.Tok != token.DEFINE || it.l.keyIdx {
			return false
		}
		for _, e := range []ast.Expr{it.l.s.Key, it.l.s.Value} {
			if id, ok := e.(*ast.Ident); ok && g.info.Defs[id] == v {
				return true
			}
		}
	}
	return false
}

// assigns reports whether an assignment (tok = or :=) of rhs to lhs gives
// v a value that does not depend on its old one: v is one of lhs as a
// plain name (declared or assigned), and names v nowhere else, neither
// in rhs nor inside another left operand (a[v], p.f where p is v). Such an
// assignment ends v's old value as a declaration does: a path from an
// entry of Poll that meets it first does not need v to survive a
// suspension.
func (g *gen) assigns(tok token.Token, lhs, rhs []ast.Expr, v *types.Var) bool {
	if tok != token.ASSIGN && tok != token.DEFINE {
		return false
	}
	plain := false
	for _, l := range lhs {
		if id, ok := ast.Unparen(l).(*ast.Ident); ok {
			if g.info.Uses[id] == v || g.info.Defs[id] == v {
				plain = true
			}
			continue
		}
		if g.mentions(l, v) {
			return false
		}
	}
	if !plain {
		return false
	}
	for _, r := range rhs {
		if g.mentions(r, v) {
			return false
		}
	}
	return true
}

// mentions reports whether n names v.
func (g *fnCtx) mentions(n ast.Node, v *types.Var) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && (g.info.Uses[id] == v || g.info.Defs[id] == v) {
			found = true
		}
		return !found
	})
	return found
}

// itemUses reports whether item it names v.
func (g *gen) itemUses(it any, v *types.Var) bool {
	found := false
	for _, n := range itemNodes(it) {
		ast.Inspect(n, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && (g.info.Uses[id] == v || g.info.Defs[id] == v) {
				found = true
			}
			return !found
		})
	}
	return found
}

// itemTargets returns the blocks that item it may transfer to without
// suspending: every target of its jumps, and for a copied statement the
// targets of every break and continue in it (outside function literals).
func (g *gen) itemTargets(it any) []*block {
	switch it := it.(type) {
	case stmtItem:
		var out []*block
		ast.Inspect(it.s, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.BranchStmt:
				if n.Label != nil {
					if lp, ok := g.labels[n.Label.Name]; ok {
						out = append(out, lp.brk, lp.cont)
					}
				} else if it.lp != nil {
					out = append(out, it.lp.brk, it.lp.cont)
				}
			}
			return true
		})
		return out
	case branchItem:
		return []*block{it.then, it.els}
	case loopHead:
		return []*block{it.exit}
	case gotoItem:
		return []*block{it.to}
	case switchItem:
		return append(append([]*block(nil), it.targets...), it.join)
	case rangeHead:
		return []*block{it.l.exit}
	case caseTest:
		return []*block{it.to}
	}
	return nil
}
