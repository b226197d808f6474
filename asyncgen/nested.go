package asyncgen

// Awaits nested in expressions. A statement whose expressions hold an await
// deeper than the forms the lowering knows (x := future.Await(f), ...) is
// linearized first: each await becomes a statement of its own, tmp :=
// future.Await(f), before the statement, which then uses tmp. Go evaluates
// function calls, method calls, receives and logical operations in lexical
// left-to-right order, so every such operation left of an await (or in an
// operand evaluated before it) is evaluated before the await too, into a
// temporary of its own: g(h(), future.Await(f)) becomes tmp := h(); tmp2 :=
// future.Await(f); g(tmp, tmp2). Reads of variables, indexing and field
// selection are not ordered against calls by the spec and stay where they
// are, which also keeps addressable operands addressable (a[i()].m(...)
// keeps a[tmp]). The right operand of && and || runs only if the left one
// does not decide: a && future.Await(f) becomes var tmp bool = a; if tmp {
// tmp = future.Await(f) }, an if that the lowering then splits. The
// temporaries are variables the generator makes (with types.Var objects of
// their own), hoisted like any other when they live across an await.

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// linearizer collects the statements that evaluate a statement's awaits,
// in Go's order, before it.
type linearizer struct {
	g   *gen
	pre []ast.Stmt
	ok  bool
}

func (g *gen) newLinearizer() *linearizer { return &linearizer{g: g, ok: true} }

// temp declares a new variable of type t at pos, returning the identifier
// that declares it and a function that makes identifiers using it.
func (l *linearizer) temp(t types.Type, pos token.Pos) (*ast.Ident, func() *ast.Ident) {
	g := l.g
	if isUntyped(t) {
		t = types.Default(t) // an operand of && or ||, a comparison
	}
	name := g.fresh("tmp")
	v := types.NewVar(pos, g.pkg, name, t)
	if g.synth == nil {
		g.synth = map[*types.Var]bool{}
	}
	g.synth[v] = true
	def := &ast.Ident{Name: name, NamePos: pos}
	g.info.Defs[def] = v
	use := func() *ast.Ident {
		id := &ast.Ident{Name: name, NamePos: pos}
		g.info.Uses[id] = v
		g.info.Types[id] = types.TypeAndValue{Type: t}
		return id
	}
	return def, use
}

// spill evaluates e (free of awaits) into a new temporary now, returning
// the temporary.
func (l *linearizer) spill(e ast.Expr, t types.Type) ast.Expr {
	if isUntyped(t) {
		t = types.Default(t)
	}
	def, use := l.temp(t, e.Pos())
	l.pre = append(l.pre, &ast.DeclStmt{Decl: &ast.GenDecl{
		TokPos: e.Pos(), Tok: token.VAR,
		Specs: []ast.Spec{&ast.ValueSpec{
			Names:  []*ast.Ident{def},
			Type:   &ast.Ident{Name: l.g.typeString(t), NamePos: e.Pos()},
			Values: []ast.Expr{e},
		}},
	}})
	return use()
}

// copied records the types of a copy of node x.
func (l *linearizer) copied(x, c ast.Expr) ast.Expr {
	if tv, ok := l.g.info.Types[x]; ok {
		l.g.info.Types[c] = tv
	}
	if sel, ok := x.(*ast.SelectorExpr); ok {
		if s, ok := l.g.info.Selections[sel]; ok {
			l.g.info.Selections[c.(*ast.SelectorExpr)] = s
		}
	}
	return c
}

// pin makes e (free of awaits) safe to evaluate after a later await: the
// calls, receives and logical operations in it are evaluated now.
func (l *linearizer) pin(e ast.Expr) ast.Expr {
	g := l.g
	if e == nil || !hasCallOrReceive(g.info, e) {
		return e
	}
	switch x := e.(type) {
	case *ast.CallExpr:
		if tv, ok := g.info.Types[x.Fun]; ok && tv.IsType() {
			break // a conversion: a value, spilled whole
		}
		if tu, ok := g.info.TypeOf(x).(*types.Tuple); ok && tu.Len() != 1 {
			return e // several values, the only operand: nothing follows it
		}
	case *ast.UnaryExpr:
		if x.Op != token.ARROW {
			c := *x
			c.X = l.pin(x.X)
			return l.copied(x, &c)
		}
	case *ast.BinaryExpr:
		if x.Op != token.LAND && x.Op != token.LOR {
			c := *x
			c.X = l.pin(x.X)
			c.Y = l.pin(x.Y)
			return l.copied(x, &c)
		}
	case *ast.ParenExpr:
		c := *x
		c.X = l.pin(x.X)
		return l.copied(x, &c)
	case *ast.IndexExpr:
		c := *x
		c.X = l.pin(x.X)
		c.Index = l.pin(x.Index)
		return l.copied(x, &c)
	case *ast.SliceExpr:
		c := *x
		c.X = l.pin(x.X)
		c.Low, c.High, c.Max = l.pin(x.Low), l.pin(x.High), l.pin(x.Max)
		return l.copied(x, &c)
	case *ast.SelectorExpr:
		c := *x
		c.X = l.pin(x.X)
		return l.copied(x, &c)
	case *ast.StarExpr:
		c := *x
		c.X = l.pin(x.X)
		return l.copied(x, &c)
	}
	return l.spill(e, g.info.TypeOf(e))
}

// operands linearizes ops, evaluated in this order: the last one holding
// an await is linearized, the ones before it linearized and pinned.
func (l *linearizer) operands(ops []*ast.Expr) {
	last := -1
	for i, p := range ops {
		if *p != nil && l.g.hasAwait(*p) {
			last = i
		}
	}
	for i := 0; i <= last; i++ {
		if *ops[i] == nil {
			continue
		}
		*ops[i] = l.expr(*ops[i])
		if i < last {
			*ops[i] = l.pin(*ops[i])
		}
	}
}

// expr returns e with its awaits replaced by temporaries, appending the
// statements that evaluate them to l.pre.
func (l *linearizer) expr(e ast.Expr) ast.Expr {
	g := l.g
	if e == nil || !g.hasAwait(e) || !l.ok {
		return e
	}
	if call, ok := g.isAwait(e); ok {
		if g.isTry(call) || len(call.Args) != 1 {
			l.fail(e)
			return e
		}
		c := *call
		c.Args = []ast.Expr{l.expr(call.Args[0])}
		l.copied(call, &c)
		def, use := l.temp(g.info.TypeOf(call), call.Pos())
		l.pre = append(l.pre, &ast.AssignStmt{Lhs: []ast.Expr{def}, TokPos: call.Pos(), Tok: token.DEFINE, Rhs: []ast.Expr{&c}})
		return use()
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		c := *x
		c.X = l.expr(x.X)
		return l.copied(x, &c)
	case *ast.BinaryExpr:
		if (x.Op == token.LAND || x.Op == token.LOR) && g.hasAwait(x.Y) {
			t := g.info.TypeOf(x)
			left := l.spill(l.expr(x.X), t)
			sub := &linearizer{g: g, ok: true}
			right := sub.expr(x.Y)
			if !sub.ok {
				l.ok = false
				return e
			}
			tid := left.(*ast.Ident)
			body := append(sub.pre, &ast.AssignStmt{Lhs: []ast.Expr{l.reuse(tid)}, TokPos: x.OpPos, Tok: token.ASSIGN, Rhs: []ast.Expr{right}})
			var cond ast.Expr = l.reuse(tid)
			if x.Op == token.LOR {
				cond = &ast.UnaryExpr{OpPos: x.OpPos, Op: token.NOT, X: cond}
				g.info.Types[cond] = types.TypeAndValue{Type: t}
			}
			l.pre = append(l.pre, &ast.IfStmt{If: x.OpPos, Cond: cond, Body: &ast.BlockStmt{Lbrace: x.OpPos, List: body, Rbrace: x.End()}})
			return l.reuse(tid)
		}
		c := *x
		l.operands([]*ast.Expr{&c.X, &c.Y})
		return l.copied(x, &c)
	case *ast.CallExpr:
		c := *x
		c.Args = append([]ast.Expr(nil), x.Args...)
		ops := []*ast.Expr{}
		fun := ast.Unparen(x.Fun)
		if sel, ok := fun.(*ast.SelectorExpr); ok {
			if s, ok := g.info.Selections[sel]; ok && s.Kind() == types.MethodVal {
				// The receiver is an operand; the method value is
				// not made early (it would copy a value receiver).
				cs := *sel
				l.copied(sel, &cs)
				c.Fun = &cs
				ops = append(ops, &cs.X)
			} else {
				ops = append(ops, &c.Fun)
			}
		} else {
			ops = append(ops, &c.Fun)
		}
		for i := range c.Args {
			ops = append(ops, &c.Args[i])
		}
		l.operands(ops)
		return l.copied(x, &c)
	case *ast.IndexExpr:
		c := *x
		l.operands([]*ast.Expr{&c.X, &c.Index})
		return l.copied(x, &c)
	case *ast.SliceExpr:
		c := *x
		l.operands([]*ast.Expr{&c.X, &c.Low, &c.High, &c.Max})
		return l.copied(x, &c)
	case *ast.SelectorExpr:
		c := *x
		l.operands([]*ast.Expr{&c.X})
		return l.copied(x, &c)
	case *ast.StarExpr:
		c := *x
		l.operands([]*ast.Expr{&c.X})
		return l.copied(x, &c)
	case *ast.UnaryExpr:
		c := *x
		l.operands([]*ast.Expr{&c.X})
		return l.copied(x, &c)
	case *ast.TypeAssertExpr:
		c := *x
		l.operands([]*ast.Expr{&c.X})
		return l.copied(x, &c)
	case *ast.CompositeLit:
		c := *x
		c.Elts = append([]ast.Expr(nil), x.Elts...)
		var ops []*ast.Expr
		for i, el := range c.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				ckv := *kv
				c.Elts[i] = &ckv
				if _, isStruct := g.info.TypeOf(x).Underlying().(*types.Struct); !isStruct {
					ops = append(ops, &ckv.Key) // a map's or an array's key is an expression
				}
				ops = append(ops, &ckv.Value)
				continue
			}
			ops = append(ops, &c.Elts[i])
		}
		l.operands(ops)
		return l.copied(x, &c)
	}
	l.fail(e)
	return e
}

// reuse is another identifier of the temporary tid.
func (l *linearizer) reuse(tid *ast.Ident) *ast.Ident {
	v := l.g.info.Uses[tid]
	id := &ast.Ident{Name: tid.Name, NamePos: tid.NamePos}
	l.g.info.Uses[id] = v
	l.g.info.Types[id] = types.TypeAndValue{Type: v.Type()}
	return id
}

// fail rejects the await in e that the linearizer cannot move.
func (l *linearizer) fail(e ast.Expr) {
	l.ok = false
	l.g.rejectNested(e)
}

// lowerNested lowers a statement whose expressions hold awaits in forms
// of their own: the awaits first, as statements, then the statement. It
// reports whether it handled s (else the caller rejects it).
func (g *gen) lowerNested(s ast.Stmt, lp *loopCtx) (handled, term bool) {
	l := g.newLinearizer()
	var out ast.Stmt
	switch s := s.(type) {
	case *ast.ExprStmt:
		c := *s
		c.X = l.expr(s.X)
		out = &c
	case *ast.AssignStmt:
		c := *s
		c.Lhs = append([]ast.Expr(nil), s.Lhs...)
		c.Rhs = append([]ast.Expr(nil), s.Rhs...)
		var ops []*ast.Expr
		for i, e := range c.Lhs {
			// The operands of index expressions and indirections on the
			// left are evaluated with the right-hand side, in order.
			switch x := ast.Unparen(e).(type) {
			case *ast.Ident:
			case *ast.IndexExpr:
				cx := *x
				l.copied(x, &cx)
				c.Lhs[i] = &cx
				ops = append(ops, &cx.X, &cx.Index)
			case *ast.StarExpr:
				cx := *x
				l.copied(x, &cx)
				c.Lhs[i] = &cx
				ops = append(ops, &cx.X)
			case *ast.SelectorExpr:
				cx := *x
				l.copied(x, &cx)
				c.Lhs[i] = &cx
				ops = append(ops, &cx.X)
			default:
				ops = append(ops, &c.Lhs[i])
			}
		}
		for i := range c.Rhs {
			ops = append(ops, &c.Rhs[i])
		}
		l.operands(ops)
		out = &c
	case *ast.ReturnStmt:
		c := *s
		c.Results = append([]ast.Expr(nil), s.Results...)
		ops := make([]*ast.Expr, len(c.Results))
		for i := range c.Results {
			ops[i] = &c.Results[i]
		}
		l.operands(ops)
		out = &c
	case *ast.DeferStmt:
		call, ok := l.expr(s.Call).(*ast.CallExpr)
		if !ok {
			return true, false
		}
		c := *s
		c.Call = call
		out = &c
	case *ast.SendStmt:
		c := *s
		l.operands([]*ast.Expr{&c.Chan, &c.Value})
		out = &c
	case *ast.IncDecStmt:
		c := *s
		l.operands([]*ast.Expr{&c.X})
		out = &c
	case *ast.DeclStmt:
		gd, ok := s.Decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			return false, false
		}
		cg := *gd
		cg.Specs = append([]ast.Spec(nil), gd.Specs...)
		var ops []*ast.Expr
		for i, sp := range cg.Specs {
			vs := *sp.(*ast.ValueSpec)
			vs.Values = append([]ast.Expr(nil), vs.Values...)
			cg.Specs[i] = &vs
			for j := range vs.Values {
				ops = append(ops, &vs.Values[j])
			}
		}
		l.operands(ops)
		c := *s
		c.Decl = &cg
		out = &c
	default:
		return false, false
	}
	if !l.ok {
		return true, false
	}
	for _, p := range l.pre {
		g.lowerStmt(p, lp)
	}
	return true, g.lowerStmt(out, lp)
}

// lowerCond linearizes an if's condition or a switch's tag: its awaits are
// lowered into the current block, and the expression that uses their
// temporaries returned; ok is false if it was rejected.
func (g *gen) lowerCond(e ast.Expr, lp *loopCtx) (ast.Expr, bool) {
	if e == nil || !g.hasAwait(e) {
		return e, true
	}
	l := g.newLinearizer()
	out := l.expr(e)
	if !l.ok {
		return e, false
	}
	for _, p := range l.pre {
		g.lowerStmt(p, lp)
	}
	return out, true
}

// caseTest is one step of a switch whose case expressions await: if the
// tag equals the case expression (or, without a tag, if it holds), go to
// the clause.
type caseTest struct {
	tag, expr ast.Expr // tag nil for a switch without one
	to        *block
	pos       token.Pos
}

// lowerCaseChain dispatches a switch with awaits in its case expressions
// as Go evaluates it: the tag once, into a temporary, then each case
// expression top to bottom and left to right, its awaits first, until one
// equals the tag; then the default clause, or the end of the switch.
func (g *gen) lowerCaseChain(sw *ast.SwitchStmt, it switchItem, lp *loopCtx) bool {
	var tag ast.Expr
	if sw.Tag != nil {
		t := sw.Tag
		if it.tag != nil {
			t = it.tag
		}
		l := g.newLinearizer()
		tag = l.spill(t, g.info.TypeOf(sw.Tag))
		for _, p := range l.pre {
			g.lowerStmt(p, lp)
		}
	}
	def := it.join
	for i, c := range sw.Body.List {
		cc := c.(*ast.CaseClause)
		if cc.List == nil {
			def = it.targets[i]
		}
		for _, e := range cc.List {
			x, ok := g.lowerCond(e, lp)
			if !ok {
				return false
			}
			g.add(caseTest{tag: tag, expr: x, to: it.targets[i], pos: e.Pos()})
		}
	}
	g.add(gotoItem{to: def, pos: sw.Body.Rbrace})
	return true
}

func (g *emitter) emitCaseTest(b *strings.Builder, it caseTest) {
	b.WriteString(g.line(it.pos))
	cond := g.rewrite(it.expr, nil)
	if it.tag != nil {
		cond = g.rewrite(it.tag, nil) + " == " + cond
	}
	fmt.Fprintf(b, "if %s {\n%s\n}\n", cond, g.jump(it.to))
}
