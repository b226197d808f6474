package asyncgen

// Lower (pass 6): the body into the block form (ir.go), statement by
// statement; what has no await is copied, an await ends its block, a
// construct holding an await is split into blocks. Awaits nested in
// expressions are linearized first (nested.go).

import (
	"go/ast"
	"go/token"
	"go/types"
)

func (g *gen) newBlock() *block {
	b := &block{id: len(g.blocks)}
	g.blocks = append(g.blocks, b)
	return b
}

func (g *gen) add(it any) { g.cur.items = append(g.cur.items, it) }

// lowerList lowers stmts into the current block and the blocks it opens.
// It reports whether the list ends in a statement that never falls through.
func (g *gen) lowerList(stmts []ast.Stmt, lp *loopCtx) bool {
	term := false
	for _, s := range stmts {
		term = g.lowerStmt(s, lp)
	}
	return term
}

// isVarOrDeref reports whether e is a variable, or *p for a variable p:
// what future.Try may assign to. The p of *p is read after the await; Go
// leaves the order of a variable's read and a call unspecified, and an
// async literal's captured variables are read so ((*x), hoisted).
func isVarOrDeref(e ast.Expr) bool {
	e = ast.Unparen(e)
	if st, ok := e.(*ast.StarExpr); ok {
		e = ast.Unparen(st.X)
	}
	_, isID := e.(*ast.Ident)
	return isID
}

func (g *gen) lowerStmt(s ast.Stmt, lp *loopCtx) bool {
	if !g.hasAwait(s) && !g.isSelectSwitch(s) {
		g.checkPlain(s)
		g.add(stmtItem{s: s, lp: lp})
		return terminates(s)
	}
	switch s := s.(type) {
	case *ast.ExprStmt:
		if call, ok := g.isAwait(s.X); ok {
			g.lowerAwait(call, nil, false, s.Pos())
			return false
		}
	case *ast.AssignStmt:
		if len(s.Lhs) == 2 && len(s.Rhs) == 1 {
			if call, ok := g.isAwait(s.Rhs[0]); ok && g.isTry(call) {
				for _, l := range s.Lhs {
					if !isVarOrDeref(l) {
						g.reject(s.Pos(), "future.Try assigned to anything but variables (or *p, p a variable) is not supported in an async function yet; write v, err := future.Try(f) and assign v instead")
						return false
					}
				}
				g.lowerAwait(call, nil, false, s.Pos())
				g.cur.resume.try = s
				return false
			}
		}
		if len(s.Lhs) == 1 && len(s.Rhs) == 1 {
			if call, ok := g.isAwait(s.Rhs[0]); ok {
				id, isID := ast.Unparen(s.Lhs[0]).(*ast.Ident)
				if !isID {
					break // a[i] = Await(f): the linearizer orders the index and the await
				}
				// x op= Await(f) reads x after the await: Go leaves the
				// order of a variable's read and a call unspecified.
				g.lowerAwait(call, id, s.Tok == token.DEFINE, s.Pos())
				g.cur.resume.op = s.Tok
				return false
			}
		}
	case *ast.IfStmt:
		return g.lowerIf(s, lp)
	case *ast.ForStmt:
		return g.lowerFor(s)
	case *ast.RangeStmt:
		return g.lowerRange(s)
	case *ast.SwitchStmt:
		return g.lowerSwitch(s, lp)
	case *ast.TypeSwitchStmt:
		return g.lowerSwitch(s, lp)
	case *ast.LabeledStmt:
		switch s.Stmt.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt:
			g.label0 = s.Label.Name
			return g.lowerStmt(s.Stmt, lp)
		}
	case *ast.ReturnStmt:
		if len(s.Results) == 1 && g.resKind == 2 {
			if call, ok := g.isAwait(s.Results[0]); ok && g.isTry(call) {
				g.lowerAwait(call, nil, false, s.Pos())
				if g.cur.resume != nil { // nil: refused
					g.cur.resume.ret = true
				}
				return true
			}
		}
		if len(s.Results) == 1 && g.resKind == 1 {
			if call, ok := g.isAwait(s.Results[0]); ok && !g.isTry(call) {
				g.lowerAwait(call, nil, false, s.Pos())
				if g.cur.resume != nil { // nil: refused
					g.cur.resume.ret = true
				}
				return true
			}
		}
	case *ast.BlockStmt:
		// Its statements join the current block without braces: the
		// variables it declares become fields, so that they neither
		// collide with nor shadow the enclosing ones in the same case.
		// (Nested statements keep their own braces or start blocks.)
		for _, st := range s.List {
			switch st := st.(type) {
			case *ast.AssignStmt:
				if st.Tok == token.DEFINE {
					g.force(st)
				}
			case *ast.DeclStmt:
				g.force(st)
			}
		}
		return g.lowerList(s.List, lp)
	case *ast.DeferStmt:
		if g.litHasAwait(s) {
			g.rejectNested(s) // the literal's message
			return false
		}
		if _, ok := g.isAwait(s.Call); ok {
			g.reject(s.Pos(), "a deferred await is not supported in an async function (a deferred call cannot wait); write the await before the return instead")
			return false
		}
		// defer g(future.Await(f)): the arguments are evaluated at the
		// defer statement, so the awaits run there (the linearizer).
	}
	if what, advice := construct(s); what != "" {
		g.reject(s.Pos(), "%s holding an await is not supported in an async function yet; write %s instead", what, advice)
		return false
	}
	if handled, term := g.lowerNested(s, lp); handled {
		return term
	}
	g.rejectNested(s)
	return false
}

func construct(s ast.Stmt) (what, advice string) {
	switch s.(type) {
	case *ast.SwitchStmt:
		return "a switch statement", "it with if and for"
	case *ast.TypeSwitchStmt:
		return "a type switch", "it with if and for"
	case *ast.RangeStmt:
		return "a range loop", "it with if and for"
	case *ast.SelectStmt:
		return "a select over Go's channels", "a select over futures (select { case v := <-future.On(f): ... }, with the futures of package channels in place of Go's channels)"
	case *ast.LabeledStmt:
		return "a labeled statement", "it with if and for"
	case *ast.GoStmt:
		return "a go statement", "the goroutine's work as an async function of its own and spawn it as a task (blitz.SpawnOn(h, workAsync(...)))"
	}
	return "", ""
}

// rejectAwaitValues rejects future.Await used other than called: a
// function value the generator cannot follow, which would panic.
func (g *gen) rejectAwaitValues() {
	called := map[ast.Expr]bool{}
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if call, ok := g.isAwait(e); ok {
				fun := ast.Unparen(call.Fun)
				called[fun] = true
				if ix, ok := fun.(*ast.IndexExpr); ok {
					called[ix.X] = true
				}
			}
		}
		return true
	})
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		var id *ast.Ident
		switch x := n.(type) {
		case *ast.SelectorExpr:
			id = x.Sel
		case *ast.Ident:
			id = x
		case *ast.IndexExpr:
			return true
		default:
			return true
		}
		obj := g.info.Uses[id]
		if !isMarker(obj) {
			return true
		}
		if !called[n.(ast.Expr)] {
			g.reject(id.Pos(), "future.%s as a value is not supported in an async function yet; write a call future.%s(f) instead", obj.Name(), obj.Name())
		}
		return false
	})
}

// litHasAwait reports whether a function literal inside n holds an await.
func (g *gen) litHasAwait(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if fl, ok := n.(*ast.FuncLit); ok && g.hasAwait(fl) {
			found = true
		}
		return !found
	})
	return found
}

// rejectNested reports the first await of n that sits inside a larger
// expression.
func (g *gen) rejectNested(n ast.Node) { g.rejectAwaitIn(n, "") }

// rejectAwaitIn reports the first await of n, with msg if it is not "",
// or one in a function literal.
func (g *gen) rejectAwaitIn(n ast.Node, msg string) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if call, ok := g.isAwait(e); ok {
				if msg != "" {
					g.reject(e.Pos(), "%s", msg)
				} else if g.isTry(call) {
					g.reject(e.Pos(), "an await nested in a larger expression is not supported in an async function yet; write v, err := future.Try(f) as a statement of its own and use v and err instead")
				} else {
					g.reject(e.Pos(), "an await nested in a larger expression is not supported in an async function yet; write v := future.Await(f) as a statement of its own and use v instead")
				}
				return false
			}
		}
		if fl, ok := n.(*ast.FuncLit); ok && g.hasAwait(fl) {
			g.reject(fl.Pos(), "an await in a plain function literal is not supported in an async function (the literal is not async); write the literal as an async one, future.Async(func() T { ... }) (or AsyncFallible, AsyncDo), and await or spawn it, or the await in the async function itself, instead")
			return false
		}
		return true
	})
}

// checkPlain rejects, in a statement without awaits, what would change
// meaning inside Poll (go, goto, select, local types, a deferred function
// whose recover would not work) and notes the defer statements.
func (g *gen) checkPlain(s ast.Stmt) {
	ast.Inspect(s, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // its statements belong to another function
		case *ast.GoStmt:
			g.reject(n.Pos(), "a go statement is not supported in an async function yet; write the goroutine's work as an async function of its own and spawn it as a task (blitz.SpawnOn(h, workAsync(...))) instead")
		case *ast.DeferStmt:
			g.checkDefer(n)
		case *ast.SelectStmt:
			g.reject(n.Pos(), "a select over Go's channels is not supported in an async function (it would block the worker's thread); write a select over futures (select { case v := <-future.On(f): ... }, with the futures of package channels in place of Go's channels) instead")
		case *ast.BranchStmt:
			if n.Tok == token.GOTO {
				g.reject(n.Pos(), "a goto statement is not supported in an async function yet; write it with if and for instead")
			}
		case *ast.DeclStmt:
			if gd, ok := n.Decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				g.reject(n.Pos(), "a local type is not supported in an async function yet; write it at package level instead")
			}
		}
		return true
	})
}

// terminates reports whether s never falls through (the Go spec's
// terminating statements, as far as the generated code needs them).
func terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.BREAK || s.Tok == token.CONTINUE || s.Tok == token.GOTO
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
		}
	case *ast.BlockStmt:
		return len(s.List) > 0 && terminates(s.List[len(s.List)-1])
	case *ast.IfStmt:
		return s.Else != nil && terminates(s.Body) && terminates(s.Else)
	case *ast.ForStmt:
		return s.Cond == nil && !hasBreak(s.Body)
	case *ast.LabeledStmt:
		if f, ok := s.Stmt.(*ast.ForStmt); ok {
			return f.Cond == nil && !hasBreakTo(f.Body, s.Label.Name)
		}
		return terminates(s.Stmt) && !hasBreakTo(s.Stmt, s.Label.Name)
	case *ast.SwitchStmt:
		return clausesTerminate(s.Body)
	case *ast.TypeSwitchStmt:
		return clausesTerminate(s.Body)
	}
	return false
}

// clausesTerminate reports whether a switch body has a default clause, no
// break, and clauses that each end in a terminating statement or a
// fallthrough.
func clausesTerminate(body *ast.BlockStmt) bool {
	hasDefault := false
	for _, c := range body.List {
		cc := c.(*ast.CaseClause)
		if cc.List == nil {
			hasDefault = true
		}
		if len(cc.Body) == 0 {
			return false
		}
		last := cc.Body[len(cc.Body)-1]
		if br, ok := last.(*ast.BranchStmt); ok && br.Tok == token.FALLTHROUGH {
			continue
		}
		if !terminates(last) {
			return false
		}
		for _, s := range cc.Body {
			if hasBreak(s) {
				return false
			}
		}
	}
	return hasDefault
}

// hasBreak reports whether body breaks out of its enclosing statement.
func hasBreak(body ast.Node) bool { return hasBreakTo(body, "") }

// hasBreakTo reports whether body breaks out of its enclosing statement,
// labeled label ("" for none): an unlabeled break not inside a nested
// loop, switch or select, or a break label anywhere.
func hasBreakTo(body ast.Node, label string) bool {
	found := false
	depth := 0
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			if n != body {
				depth++
				ast.Inspect(n, func(m ast.Node) bool {
					if m == n {
						return true
					}
					return visit(m)
				})
				depth--
				return false
			}
		case *ast.BranchStmt:
			if n.Tok == token.BREAK && (n.Label == nil && depth == 0 || n.Label != nil && n.Label.Name == label && label != "") {
				found = true
			}
		}
		return !found
	}
	ast.Inspect(body, visit)
	return found
}

func (g *gen) lowerAwait(call *ast.CallExpr, lhs *ast.Ident, define bool, pos token.Pos) {
	if len(call.Args) != 1 {
		g.reject(call.Pos(), "%s takes one future; write %s(f) instead", g.markerName(call), g.markerName(call))
		return
	}
	if g.hasAwait(call.Args[0]) {
		// future.Await(g(future.Await(f))): the inner awaits first.
		arg, ok := g.lowerCond(call.Args[0], nil)
		if !ok {
			return
		}
		c := *call
		c.Args = []ast.Expr{arg}
		if tv, ok := g.info.Types[call]; ok {
			g.info.Types[&c] = tv
		}
		call = &c
	}
	field := g.awaitField(call)
	next := g.newBlock()
	next.targeted = true
	g.add(awaitStart{call: call, field: field, resume: next, pos: pos})
	g.cur = next
	r := &awaitResume{lhs: lhs, define: define, field: field, pos: pos, call: call}
	next.resume = r
	g.add(r)
}

// force marks the variables that s declares as fields: a statement lowered
// out of its scope (the init of an if or a for) must not collide with the
// names of the case it lands in.
func (g *gen) force(s ast.Stmt) {
	if s == nil {
		return
	}
	ast.Inspect(s, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false // its parameters and locals are the literal's
		}
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := g.info.Defs[id].(*types.Var); ok {
				g.forced[v] = true
			}
		}
		return true
	})
}

func (g *gen) lowerIf(s *ast.IfStmt, lp *loopCtx) bool {
	if !g.lowerInit(s.Init, lp) {
		return false
	}
	cond, ok := g.lowerCond(s.Cond, lp)
	if !ok {
		return false
	}
	then := g.newBlock()
	then.targeted = true
	var join *block
	getJoin := func() *block {
		if join == nil {
			join = &block{targeted: true}
		}
		return join
	}
	var els *block
	if s.Else != nil {
		els = g.newBlock()
		els.targeted = true
	} else {
		els = getJoin()
	}
	g.add(branchItem{cond: cond, then: then, els: els, pos: s.Pos()})
	g.cur = then
	tThen := g.lowerList(s.Body.List, lp)
	if !tThen {
		g.add(gotoItem{to: getJoin(), pos: s.Body.Rbrace})
	}
	tElse := false
	if s.Else != nil {
		g.cur = els
		switch e := s.Else.(type) {
		case *ast.BlockStmt:
			tElse = g.lowerList(e.List, lp)
			if !tElse {
				g.add(gotoItem{to: getJoin(), pos: e.Rbrace})
			}
		case *ast.IfStmt:
			tElse = g.lowerStmt(e, lp)
			if !tElse {
				g.add(gotoItem{to: getJoin(), pos: e.End()})
			}
		}
	}
	if join == nil {
		// Both branches end the function or leave the loop: what follows
		// is unreachable, like the code after a return.
		join = &block{}
	}
	join.id = len(g.blocks)
	g.blocks = append(g.blocks, join)
	g.cur = join
	return tThen && tElse
}

// lowerInit lowers the init statement of an if or a switch, which runs
// once before the condition or tag: an await in it is lowered as the
// statement it is (x, err := future.Try(f), v := future.Await(f), ...), its
// variables hoisted, since they leave their scope. It reports whether init
// was accepted.
func (g *gen) lowerInit(init ast.Stmt, lp *loopCtx) bool {
	if init == nil {
		return true
	}
	g.force(init)
	if !g.hasAwait(init) {
		g.checkPlain(init)
		g.add(stmtItem{s: init, lp: lp})
		return true
	}
	n := len(g.errs)
	switch init.(type) {
	case *ast.AssignStmt, *ast.ExprStmt:
		g.lowerStmt(init, lp)
	default:
		g.rejectNested(init)
	}
	return len(g.errs) == n
}

// takeLabel returns the label of the statement being lowered, if any.
func (g *gen) takeLabel() string {
	l := g.label0
	g.label0 = ""
	return l
}

// bind makes label, if any, name lp for labeled break and continue.
func (g *gen) bind(label string, lp *loopCtx) {
	if label != "" {
		if g.labels == nil {
			g.labels = map[string]*loopCtx{}
		}
		g.labels[label] = lp
	}
}

func (g *gen) lowerSwitch(st ast.Stmt, lp *loopCtx) bool {
	label := g.takeLabel()
	init, _, body := switchParts(st)
	if ts, ok := st.(*ast.TypeSwitchStmt); ok {
		// Each clause's variable is set by the dispatch, in another case
		// than the clause's: a field.
		for _, c := range ts.Body.List {
			if v, ok := g.info.Implicits[c].(*types.Var); ok {
				g.forced[v] = true
				g.implicit = append(g.implicit, v)
			}
		}
	}
	s := struct {
		Init ast.Stmt
		Body *ast.BlockStmt
	}{init, body}
	caseAwait := false
	for _, c := range s.Body.List {
		for _, e := range c.(*ast.CaseClause).List {
			caseAwait = caseAwait || g.hasAwait(e)
		}
	}
	if !g.lowerInit(s.Init, lp) {
		return false
	}
	it := switchItem{s: st}
	if sw, ok := st.(*ast.SwitchStmt); ok && g.hasAwait(sw.Tag) {
		tag, ok := g.lowerCond(sw.Tag, lp)
		if !ok {
			return false
		}
		it.tag = tag
	}
	if ts, ok := st.(*ast.TypeSwitchStmt); ok && g.hasAwait(ts.Assign) {
		// The guard's operand, evaluated once: its awaits first.
		x, ok := g.lowerCond(typeSwitchOperand(ts), lp)
		if !ok {
			return false
		}
		it.tag = x
	}
	join := &block{}
	hasDefault := false
	for _, c := range s.Body.List {
		b := g.newBlock()
		b.targeted = true
		it.targets = append(it.targets, b)
		if c.(*ast.CaseClause).List == nil {
			hasDefault = true
		}
	}
	if !hasDefault {
		it.join = join
		join.targeted = true
	}
	if caseAwait {
		if !g.lowerCaseChain(st.(*ast.SwitchStmt), it, lp) {
			return false
		}
	} else {
		g.add(it)
	}
	inner := &loopCtx{brk: join}
	g.bind(label, inner)
	if lp != nil {
		inner.cont = lp.cont
	}
	for i, c := range s.Body.List {
		cc := c.(*ast.CaseClause)
		g.cur = it.targets[i]
		body := cc.Body
		fall := false
		if n := len(body); n > 0 {
			if br, ok := body[n-1].(*ast.BranchStmt); ok && br.Tok == token.FALLTHROUGH {
				body, fall = body[:n-1], true
			}
		}
		term := g.lowerList(body, inner)
		switch {
		case fall && !term:
			g.add(gotoItem{to: it.targets[i+1], pos: cc.Body[len(cc.Body)-1].Pos()})
		case !term:
			join.targeted = true
			g.add(gotoItem{to: join, pos: s.Body.Rbrace})
		}
		if hasBreakTo(&ast.BlockStmt{List: body}, label) {
			join.targeted = true
		}
	}
	join.id = len(g.blocks)
	g.blocks = append(g.blocks, join)
	g.cur = join
	return !join.targeted
}

// typeSwitchOperand returns x of a type switch's guard x.(type).
func typeSwitchOperand(ts *ast.TypeSwitchStmt) ast.Expr {
	var x ast.Expr
	switch a := ts.Assign.(type) {
	case *ast.AssignStmt:
		x = a.Rhs[0]
	case *ast.ExprStmt:
		x = a.X
	}
	return ast.Unparen(x).(*ast.TypeAssertExpr).X
}

// switchParts returns a switch's init, its tag (or type switch guard) and
// its body.
func switchParts(st ast.Stmt) (ast.Stmt, ast.Node, *ast.BlockStmt) {
	switch s := st.(type) {
	case *ast.SwitchStmt:
		if s.Tag == nil {
			return s.Init, nil, s.Body
		}
		return s.Init, s.Tag, s.Body
	case *ast.TypeSwitchStmt:
		return s.Init, s.Assign, s.Body
	}
	panic("not a switch")
}

func (g *gen) lowerRange(s *ast.RangeStmt) bool {
	label := g.takeLabel()
	if g.hasAwait(s.Key) || g.hasAwait(s.Value) {
		g.rejectNested(s.Key)
		g.rejectNested(s.Value)
		return false
	}
	l := &rangeLoop{s: s, x: s.X}
	l.value = s.Value != nil && !isBlank(s.Value)
	xt := g.info.TypeOf(s.X)
	rngType := g.typeString(types.Default(xt))
	idxType := "int"
	switch u := coreType(xt).(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsInteger != 0:
			l.kind = "int"
			idxType = rngType
		case u.Info()&types.IsString != 0:
			l.kind = "string"
			l.named = !types.Identical(xt, types.Typ[types.String])
		}
	case *types.Slice:
		l.kind = "slice"
	case *types.Array:
		l.kind = "array"
		if !l.value && !hasCallOrReceive(g.info, s.X) {
			// Go does not evaluate the range expression then: its length
			// is a constant (not so when it holds a call or a receive,
			// which are evaluated).
			l.arrN = u.Len()
		}
	case *types.Pointer:
		// A pointer to an array: ranged through the pointer, read at each
		// iteration (f.rangeValue[i] indexes through it), not copied.
		if a, ok := u.Elem().Underlying().(*types.Array); ok {
			l.kind = "array"
			if !l.value && !hasCallOrReceive(g.info, s.X) {
				l.arrN = a.Len()
			}
		}
	case *types.Map:
		g.reject(s.Pos(), "a range loop over a map holding an await is not supported in an async function yet; write a loop over a slice of its keys instead")
		return false
	case *types.Chan:
		g.reject(s.Pos(), "a range loop over a channel holding an await is not supported in an async function yet; write the channel as one of package channels and range over its receives, for v := range future.Each(c.Recv) { ... }, instead")
		return false
	}
	if l.kind == "" {
		g.reject(s.Pos(), "a range loop over %s holding an await is not supported in an async function yet; write a loop over a slice instead", g.typeString(xt))
		return false
	}
	g.loops = append(g.loops, s)
	l.direct, l.keyIdx = g.rangeParts(s, l.kind)
	if s.Tok == token.DEFINE {
		// Declared in the loop's scope; assigned in the head block, a
		// case of its own, so that they are locals of that case unless
		// another variable of the loop's body has the same name (which
		// Go allows in the body's scope, and the case does not have).
		// Hoisting makes them fields where they live longer.
		for _, e := range []ast.Expr{s.Key, s.Value} {
			if id, ok := e.(*ast.Ident); ok && (g.redeclaredIn(id, s.Body) || l.keyIdx && e == s.Key) {
				g.force(&ast.AssignStmt{Lhs: []ast.Expr{id}, Tok: token.DEFINE})
			}
		}
	}
	if (l.kind != "array" || l.value || hasCallOrReceive(g.info, s.X)) && !l.direct {
		l.rng = freshIn(g.fields, "rangeValue")
		g.rangeFields = append(g.rangeFields, l.rng+" "+rngType)
	}
	if !l.keyIdx {
		l.idx = freshIn(g.fields, "rangeIndex")
		g.rangeFields = append(g.rangeFields, l.idx+" "+idxType)
	}
	if l.kind == "string" {
		l.next = freshIn(g.fields, "rangeNext")
		g.rangeFields = append(g.rangeFields, l.next+" int")
		g.imports["utf8"] = "unicode/utf8"
	}
	if g.hasAwait(s.X) {
		// Evaluated once, before the loop: its awaits first.
		x, ok := g.lowerCond(s.X, nil)
		if !ok {
			return false
		}
		l.x = x
	}
	g.add(rangeInit{l})
	head := g.newBlock()
	head.targeted = true
	g.add(gotoItem{to: head, pos: s.Pos()})
	l.exit = &block{targeted: true}
	post := &block{targeted: true}
	g.cur = head
	g.add(rangeHead{l})
	lp := &loopCtx{brk: l.exit, cont: post}
	g.bind(label, lp)
	if !g.lowerList(s.Body.List, lp) {
		g.add(gotoItem{to: post, pos: s.Body.Rbrace})
	}
	post.id = len(g.blocks)
	g.blocks = append(g.blocks, post)
	g.cur = post
	g.add(rangeNext{l})
	g.add(gotoItem{to: head, pos: s.Pos()})
	l.exit.id = len(g.blocks)
	g.blocks = append(g.blocks, l.exit)
	g.cur = l.exit
	return false
}

// coreType is the underlying type of t, or for a type parameter the one
// underlying type of every type in its type set (nil if there is none),
// which ranging over it uses.
func coreType(t types.Type) types.Type {
	tp, ok := t.(*types.TypeParam)
	if !ok {
		return t.Underlying()
	}
	var core types.Type
	same := func(u types.Type) bool {
		if core == nil {
			core = u
		}
		return types.Identical(core, u)
	}
	var visit func(iface *types.Interface) bool
	visit = func(iface *types.Interface) bool {
		for i := range iface.NumEmbeddeds() {
			switch e := iface.EmbeddedType(i).(type) {
			case *types.Union:
				for j := range e.Len() {
					if !same(coreType(e.Term(j).Type())) {
						return false
					}
				}
			default:
				if ei, ok := e.Underlying().(*types.Interface); ok {
					if !visit(ei) {
						return false
					}
				} else if !same(coreType(e)) {
					return false
				}
			}
		}
		return true
	}
	iface, ok := tp.Constraint().Underlying().(*types.Interface)
	if !ok || !visit(iface) {
		return nil
	}
	return core
}

func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

// hasCallOrReceive reports whether e holds a function call or a receive
// (a conversion is not a call).
func hasCallOrReceive(info *types.Info, e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; !ok || !tv.IsType() {
				found = true
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				found = true
			}
		}
		return !found
	})
	return found
}

func (g *gen) lowerFor(s *ast.ForStmt) bool {
	label := g.takeLabel()
	g.loops = append(g.loops, s)
	// The init runs once, before the loop: an await in it is lowered as
	// the statement it is.
	if !g.lowerInit(s.Init, nil) {
		return false
	}
	head := g.newBlock()
	head.targeted = true
	g.add(gotoItem{to: head, pos: s.Pos()})
	exit := &block{}
	var post *block
	lp := &loopCtx{brk: exit, cont: head}
	if init, ok := s.Init.(*ast.AssignStmt); s.Post != nil || ok && init.Tok == token.DEFINE {
		// Without a post statement, the block that copies the init's
		// variables for the next iteration (see loopNext).
		post = &block{targeted: true}
		lp.cont = post
	}
	g.bind(label, lp)
	g.cur = head
	if s.Cond != nil {
		exit.targeted = true
		// A condition's awaits are lowered into the head, which every
		// iteration starts with.
		cond, ok := g.lowerCond(s.Cond, nil)
		if !ok {
			return false
		}
		g.add(loopHead{cond: cond, exit: exit, pos: s.Pos()})
	}
	if !g.lowerList(s.Body.List, lp) {
		g.add(gotoItem{to: lp.cont, pos: s.Body.Rbrace})
	}
	if post != nil {
		post.id = len(g.blocks)
		g.blocks = append(g.blocks, post)
		g.cur = post
		g.add(loopNext{g.loopVars(s.Init)})
		if s.Post != nil {
			g.lowerStmt(s.Post, nil)
			g.add(gotoItem{to: head, pos: s.Post.Pos()})
		} else {
			g.add(gotoItem{to: head, pos: s.Body.Rbrace})
		}
	}
	if hasBreakTo(s.Body, label) {
		exit.targeted = true
	}
	exit.id = len(g.blocks)
	g.blocks = append(g.blocks, exit)
	g.cur = exit
	return !exit.targeted
}
