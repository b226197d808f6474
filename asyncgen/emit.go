package asyncgen

// Emission (pass 10): the emitter prints the state machine's type, its
// constructor, Poll (a case per block), runDefers and Cancel, rewriting
// each item's statements into the fields (rewrite).

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// raw is a statement of generated text standing in for a source node.
func raw(text string) ast.Stmt { return &ast.ExprStmt{X: &ast.Ident{Name: text}} }

// rewrite returns the source of n with hoisted variables as fields and,
// unless n is an expression, returns, breaks and continues lowered.
func (g *emitter) rewrite(n ast.Node, lp *loopCtx) string {
	var stack []ast.Node
	inLit := 0
	loopDepth := 0  // loops inside n: continue binds to them
	breakDepth := 0 // loops, switches and selects inside n: break binds to them
	root := n
	if s, ok := n.(ast.Stmt); ok {
		// In a list, so that a statement can become several.
		root = &ast.BlockStmt{List: []ast.Stmt{s}}
	}
	plans := map[*ast.DeferStmt]*deferPlan{}
	openPlans := map[*ast.DeferStmt]*openPlan{}
	newCells := map[*ast.AssignStmt][]*types.Var{} // the cells each x := e declares
	out := astutil.Apply(root, func(c *astutil.Cursor) bool {
		stack = append(stack, c.Node())
		switch x := c.Node().(type) {
		case *ast.AssignStmt:
			if vs := g.cellDefs(x); vs != nil {
				newCells[x] = vs
			}
		case *ast.DeferStmt:
			if inLit == 0 {
				// Planned from the source's nodes, which the rewrite
				// of its children replaces.
				plans[x] = g.planDefer(x)
				if g.siteAt != nil {
					openPlans[x] = g.planOpen(x, plans[x])
				}
			}
		case *ast.FuncLit:
			inLit++
		case *ast.ForStmt, *ast.RangeStmt:
			loopDepth++
			breakDepth++
		case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			breakDepth++
		}
		return true
	}, func(c *astutil.Cursor) bool {
		stack = stack[:len(stack)-1]
		switch x := c.Node().(type) {
		case *ast.FuncLit:
			inLit--
		case *ast.ForStmt, *ast.RangeStmt:
			loopDepth--
			breakDepth--
		case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			breakDepth--
		case *ast.Ident:
			if _, spec := c.Parent().(*ast.ValueSpec); spec && c.Name() == "Names" {
				break // hoistDecl rewrites the declaration
			}
			obj := g.info.Uses[x]
			if obj == nil {
				obj = g.info.Defs[x]
			}
			if v, ok := obj.(*types.Var); ok && g.isCell(v) {
				c.Replace(g.cellRef(v, x.NamePos, inLit > 0))
				break
			}
			if v, ok := obj.(*types.Var); ok && g.pollLocal[v] {
				id := &ast.Ident{Name: g.hoisted[v], NamePos: x.NamePos}
				g.pollIdent[id] = true
				c.Replace(id)
				break
			}
			if v, ok := obj.(*types.Var); ok {
				if field, ok := g.hoisted[v]; ok {
					// At the identifier's position, so that the printer keeps
					// the source's line breaks.
					c.Replace(&ast.SelectorExpr{
						X:   &ast.Ident{Name: g.recv, NamePos: x.NamePos},
						Sel: &ast.Ident{Name: field, NamePos: x.NamePos},
					})
				}
			}
		case *ast.UnaryExpr:
			// &x of a cell is its pointer: &(*f.x) is f.x, which a cell
			// never holds nil.
			if x.Op == token.AND && g.cellDerefs[x.X] {
				c.Replace(x.X.(*ast.ParenExpr).X.(*ast.StarExpr).X)
			}
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				g.insertNewCells(c, newCells[x])
				g.defineToAssign(c, x)
			}
		case *ast.DeclStmt:
			g.hoistDecl(c, x)
		case *ast.ReturnStmt:
			if inLit == 0 {
				c.Replace(raw(g.returnText(x)))
			}
		case *ast.DeferStmt:
			if op := openPlans[x]; op != nil {
				c.Replace(raw(g.openDeferText(x, op)))
			} else if p := plans[x]; p != nil {
				c.Replace(raw(g.deferText(x, p)))
			}
		case *ast.BranchStmt:
			if inLit == 0 && x.Label != nil {
				if to, ok := g.labels[x.Label.Name]; ok {
					if x.Tok == token.CONTINUE {
						c.Replace(raw(g.jump(to.cont)))
					} else {
						c.Replace(raw(g.jump(to.brk)))
					}
				}
			}
			if inLit == 0 && x.Label == nil && lp != nil {
				if x.Tok == token.CONTINUE && loopDepth == 0 && lp.cont != nil {
					c.Replace(raw(g.jump(lp.cont)))
				}
				if x.Tok == token.BREAK && breakDepth == 0 {
					c.Replace(raw(g.jump(lp.brk)))
				}
			}
		}
		return true
	})
	if blk, ok := out.(*ast.BlockStmt); ok && root != n {
		parts := make([]string, len(blk.List))
		for i, s := range blk.List {
			parts[i] = g.print(s)
		}
		return strings.Join(parts, "\n")
	}
	return g.print(out)
}

// defineToAssign turns x := e into f.x = e when x became a field; the
// variables of the same statement that did not are declared first.
func (g *emitter) defineToAssign(c *astutil.Cursor, s *ast.AssignStmt) {
	any := false
	for _, l := range s.Lhs {
		if id, ok := l.(*ast.Ident); !ok || g.pollIdent[id] {
			any = true // a field (f.x), a cell ((*f.x)) or a local of Poll
		}
	}
	if !any {
		return
	}
	for _, l := range s.Lhs {
		if id, ok := l.(*ast.Ident); ok && id.Name != "_" && !g.pollIdent[id] {
			if v, ok := g.info.Defs[id].(*types.Var); ok {
				c.InsertBefore(raw("var " + id.Name + " " + g.typeString(v.Type())))
			}
		}
	}
	s.Tok = token.ASSIGN
}

// hoistDecl turns var x T = e into f.x = e when x became a field.
func (g *emitter) hoistDecl(c *astutil.Cursor, d *ast.DeclStmt) {
	gd, ok := d.Decl.(*ast.GenDecl)
	if !ok || gd.Tok != token.VAR {
		return
	}
	var out []string
	changed := false
	for _, spec := range gd.Specs {
		vs := spec.(*ast.ValueSpec)
		var lhs, keep []string
		for _, id := range vs.Names {
			// Names were rewritten already: a field is a selector now,
			// which a ValueSpec cannot hold, so look the object up.
			v, _ := g.info.Defs[id].(*types.Var)
			if g.isCell(v) {
				// A new variable, zero until assigned.
				out = append(out, g.newCell(v))
				lhs = append(lhs, "*"+g.recv+"."+g.hoisted[v])
				changed = true
			} else if _, ok := g.hoisted[v]; ok && v != nil {
				lhs = append(lhs, g.varRef(v))
				changed = true
				if len(vs.Values) == 0 {
					out = append(out, g.varRef(v)+" = "+g.zero(v.Type()))
				}
			} else {
				lhs = append(lhs, id.Name)
				keep = append(keep, id.Name)
				if len(vs.Values) > 0 {
					t := g.typeString(g.info.TypeOf(id))
					out = append(out, "var "+id.Name+" "+t)
				}
			}
		}
		if len(vs.Values) > 0 {
			vals := make([]string, len(vs.Values))
			for i, e := range vs.Values {
				vals[i] = g.print(e)
			}
			out = append(out, strings.Join(lhs, ", ")+" = "+strings.Join(vals, ", "))
		} else if len(keep) > 0 {
			out = append(out, "var "+strings.Join(keep, ", ")+" "+g.print(vs.Type))
		}
	}
	if changed {
		c.Replace(raw(strings.Join(out, "\n")))
	}
}

// jump is the code that goes on at block b.
func (g *emitter) jump(b *block) string {
	g.labelUse = true
	b.targeted = true // never dropped as unreachable
	return fmt.Sprintf("%s.state = %d\ncontinue %s", g.recv, b.id, g.label)
}

// done is the code that ends the function once its results are evaluated:
// its state, then its deferred calls.
func (g *emitter) done() string {
	if g.defers != "" {
		return g.recv + ".state = -1\n" + g.recv + ".runDefers()\n"
	}
	return g.recv + ".state = -1\n"
}

// returnText is the Poll code of a return statement whose results have
// been rewritten already.
func (g *emitter) returnText(r *ast.ReturnStmt) string {
	var res []string
	for _, e := range r.Results {
		res = append(res, g.print(e))
	}
	if g.named != nil {
		// Named results: the values go to their fields, the deferred
		// calls run (and may change them), the fields are returned.
		var b strings.Builder
		// return n, err of the results themselves assigns nothing (and go
		// vet reports a self-assignment): those pairs are left out, which
		// the parallel assignment allows.
		var lhs, rhs []string
		for i, f := range g.resultFields() {
			if i < len(res) && res[i] != f {
				lhs, rhs = append(lhs, f), append(rhs, res[i])
			}
		}
		if len(lhs) > 0 {
			b.WriteString(strings.Join(lhs, ", ") + " = " + strings.Join(rhs, ", ") + "\n")
		}
		b.WriteString(g.done() + "return " + g.namedValue() + ", true")
		return b.String()
	}
	switch g.resKind {
	case 0:
		return g.done() + "return struct{}{}, true"
	case 1:
		if g.defers != "" {
			// The result is evaluated before the deferred calls run.
			return fmt.Sprintf("{\nvar %s %s = %s\n%sreturn %s, true\n}", g.value, g.resType, res[0], g.done(), g.value)
		}
		return g.done() + "return " + res[0] + ", true"
	}
	if len(res) == 1 {
		// A block of its own: two such returns may share a scope.
		return fmt.Sprintf("{\n%s, %s := %s\n%sreturn %s{Value: %s, Err: %s}, true\n}",
			g.value, g.errName, res[0], g.done(), g.resType, g.value, g.errName)
	}
	if g.defers != "" {
		return fmt.Sprintf("{\n%s := %s{Value: %s, Err: %s}\n%sreturn %s, true\n}", g.value, g.resType, res[0], res[1], g.done(), g.value)
	}
	return fmt.Sprintf("%sreturn %s{Value: %s, Err: %s}, true", g.done(), g.resType, res[0], res[1])
}

// resultFields are the fields of the named results, as Poll writes them.
func (g *emitter) resultFields() []string {
	out := make([]string, len(g.resFields))
	for i, f := range g.resFields {
		out[i] = g.recv + "." + f
	}
	return out
}

// namedValue is the value Poll returns from the named results' fields.
func (g *emitter) namedValue() string {
	fs := g.resultFields()
	if g.resKind == 1 {
		return fs[0]
	}
	return fmt.Sprintf("%s{Value: %s, Err: %s}", g.resType, fs[0], fs[1])
}

func (g *emitter) emit() string {
	var b strings.Builder
	name := g.fn.Name.Name
	r := g.recv
	// Poll's cases first: rewriting them names the fields of open-coded
	// defers' values.
	var body strings.Builder
	for _, blk := range g.blocks {
		if !blk.targeted && len(blk.items) == 0 {
			continue
		}
		fmt.Fprintf(&body, "case %d:\n", blk.id)
		g.cases = append(g.cases, blk.id)
		declared := map[*types.Var]bool{}
		for _, it := range blk.items {
			var item strings.Builder
			g.emitItem(&item, blk, it)
			body.WriteString(g.takeCaptures(declared))
			body.WriteString(item.String())
		}
		body.WriteString(linePlace + "\n")
	}
	if len(g.constDecls) > 0 {
		fmt.Fprintf(&b, "\n%s\n\n// The local constants of %s.\n%s", linePlace, name, g.printConsts())
	}
	if len(g.sites) > 0 {
		fmt.Fprintf(&b, "\n%s\n\n// %s are the awaits of %s, for task dumps.\nvar %s = [...]future.AwaitSite{\n%s}\n", linePlace, g.sitesName(), name, g.sitesName(), strings.Join(g.sites, ""))
	}
	fmt.Fprintf(&b, "\n%s\n\n// %s is the state machine of %s: see %s.\ntype %s%s struct {\n", linePlace, g.typeName, name, g.ctorName, g.typeName, g.tparams)
	fmt.Fprintf(&b, "state int32 // the block Poll runs next; -1 once returned, -2 once cancelled\n")
	if g.siteAt != nil {
		fmt.Fprintf(&b, "%s uint8 // bit i: the call of the i-th defer statement is due\n", g.defers)
	}
	for _, key := range g.awOrder {
		field := g.awFields[key]
		fmt.Fprintf(&b, "%s %s // the future awaited\n", field, g.awType[field])
	}
	if g.defers != "" && g.siteAt == nil {
		fmt.Fprintf(&b, "%s []func() // the calls deferred and not yet run, in order\n", g.defers)
	}
	// The generated fields in the order of the passes that made them.
	for _, fs := range [][]string{g.rangeFields, g.blankResults, g.deferFields} {
		for _, f := range fs {
			b.WriteString(f + "\n")
		}
	}
	for _, v := range g.hoistList {
		if g.isCell(v) {
			fmt.Fprintf(&b, "%s *%s // a new variable per iteration\n", g.hoisted[v], g.typeString(v.Type()))
			continue
		}
		fmt.Fprintf(&b, "%s %s\n", g.hoisted[v], g.typeString(v.Type()))
	}
	b.WriteString("}\n\n")

	// The constructor.
	var inits []string
	params := g.fn.Type.Params.List
	if g.fn.Recv != nil {
		params = append(g.fn.Recv.List[:1:1], params...)
	}
	for _, f := range params {
		for _, id := range f.Names {
			if v, ok := g.info.Defs[id].(*types.Var); ok {
				if field, ok := g.hoisted[v]; ok {
					inits = append(inits, field+": "+id.Name)
				}
			}
		}
	}
	fmt.Fprintf(&b, "// %s returns %s as a future: polling it runs %s up to its next\n// await, and its value is what %s returns.\n", g.ctorName, name, name, name)
	recv := ""
	if g.fn.Recv != nil {
		rf := g.fn.Recv.List[0]
		recv = "(" + g.print(rf.Type) + ") "
		if len(rf.Names) > 0 {
			recv = "(" + rf.Names[0].Name + " " + g.print(rf.Type) + ") "
		}
	}
	use := ""
	if g.tparams != "" && !isLiteral(g.fn) {
		// The direct-style function is generic: it is named where its
		// type parameters are in scope.
		use = "_ = " + g.selfRef + "\n"
	}
	tparams := g.tparams
	if g.fn.Recv != nil {
		tparams = "" // a method's are its receiver's
	}
	fmt.Fprintf(&b, "func %s%s%s%s future.Future[%s] {\n%sreturn &%s{%s}\n}\n\n",
		recv, g.ctorName, tparams, strings.TrimPrefix(g.print(&ast.FuncType{Params: g.fn.Type.Params}), "func"), g.resType, use, g.selfType, strings.Join(inits, ", "))

	// Poll.
	if g.defers != "" {
		fmt.Fprintf(&b, "// Poll runs %s until it awaits a future that is not ready, or returns; if a\n// panic leaves it, the calls %s deferred run first, as in Go.\n", name, name)
		fmt.Fprintf(&b, "func (%s *%s) Poll(%s *future.Context) (%s, %s) {\n", r, g.selfType, g.cx, g.resType, "bool")
		// Poll's own names: no code of the user's is in it.
		fmt.Fprintf(&b, "returned := false\ndefer func() {\nif !returned {\nif %s.state >= 0 {\n%s.state = -1\n}\n%s.runDefers()\n}\n}()\n", r, r, r)
		fmt.Fprintf(&b, "v, ok := %s.poll(%s)\nreturned = true\nreturn v, ok\n}\n\n", r, g.cx)
		g.emitDefers(&b)
		fmt.Fprintf(&b, "// poll is Poll without the deferred calls on a panic.\n")
		fmt.Fprintf(&b, "func (%s *%s) poll(%s *future.Context) (_ %s, _ bool) {\n", r, g.selfType, g.cx, g.resType)
	} else {
		fmt.Fprintf(&b, "// Poll runs %s until it awaits a future that is not ready, or returns.\n", name)
		fmt.Fprintf(&b, "func (%s *%s) Poll(%s *future.Context) (_ %s, _ bool) {\n", r, g.selfType, g.cx, g.resType)
	}
	for _, v := range g.pollList {
		fmt.Fprintf(&b, "var %s %s // a local of Poll: not live across an await\n", g.hoisted[v], g.typeString(v.Type()))
	}
	if g.labelUse {
		fmt.Fprintf(&b, "%s:\n", g.label)
	}
	fmt.Fprintf(&b, "for {\nswitch %s.state {\n%s", r, body.String())
	fmt.Fprintf(&b, "case -1:\npanic(future.ErrPolledAfterCompletion)\ndefault:\npanic(future.ErrPolledAfterCancel)\n}\n}\n}\n\n")

	// Cancel.
	if g.defers != "" {
		fmt.Fprintf(&b, "// Cancel cancels the future that %s awaits, if any, then runs the calls\n// %s deferred; %s goes no further.\n", name, name, name)
	} else {
		fmt.Fprintf(&b, "// Cancel cancels the future that %s awaits, if any; %s goes no further.\n", name, name)
	}
	fmt.Fprintf(&b, "func (%s *%s) Cancel() {\n", r, g.selfType)
	byField := map[string][]string{}
	var fields []string
	for _, blk := range g.blocks {
		if blk.resume != nil {
			f := blk.resume.field
			if byField[f] == nil {
				fields = append(fields, f)
			}
			byField[f] = append(byField[f], strconv.Itoa(blk.id))
		}
	}
	// The state is -2 before the future in flight is cancelled, and the
	// deferred calls run (deferred) after it: a Cancel of the future that
	// panics goes on, as a panic does in Go, through the function's
	// deferred calls.
	if len(fields) > 0 {
		fmt.Fprintf(&b, "%s := %s.state\n", g.value, r) // a name no import or field takes
	}
	fmt.Fprintf(&b, "if %s.state != -1 {\n%s.state = -2\n}\n", r, r)
	if g.defers != "" {
		fmt.Fprintf(&b, "defer %s.runDefers()\n", r)
	}
	if len(fields) > 0 {
		fmt.Fprintf(&b, "switch %s {\n", g.value)
		for _, f := range fields {
			ref := r + "." + f
			if g.awValue[f] {
				ref = "&" + ref
			}
			fmt.Fprintf(&b, "case %s:\nfuture.Cancel(%s)\n%s.%s = %s\n", strings.Join(byField[f], ", "), ref, r, f, g.awZero[f])
		}
		b.WriteString("}\n")
	}
	b.WriteString("}\n")
	// The direct-style function is never called: this use keeps linters
	// from reporting it unused.
	if g.tparams == "" && !isLiteral(g.fn) { // a literal's exists only in the overlay
		fmt.Fprintf(&b, "\n// %s is what %s compiles; it is not called.\nvar _ = %s\n", name, g.ctorName, g.selfRef)
	}
	return b.String()
}

func (g *emitter) emitItem(b *strings.Builder, blk *block, it any) {
	r := g.recv
	switch it := it.(type) {
	case stmtItem:
		b.WriteString(g.line(it.s.Pos()))
		b.WriteString(g.rewrite(it.s, it.lp))
		b.WriteString("\n")
	case awaitStart:
		b.WriteString(g.line(it.pos))
		switch {
		case g.awMoved[it.field]:
			fmt.Fprintf(b, "%s.%s = *%s\n", r, it.field, g.rewrite(it.call.Args[0], nil))
		case !g.awValue[it.field]:
			// An awaited local's field is set where it was declared.
			fmt.Fprintf(b, "%s.%s = %s\n", r, it.field, g.rewrite(it.call.Args[0], nil))
			if g.awIface[it.field] {
				g.nilAwait(b, it)
			}
		}
		if it.resume.id == blk.id+1 {
			fmt.Fprintf(b, "%s.state = %d\nfallthrough\n", r, it.resume.id)
		} else {
			b.WriteString(g.jump(it.resume) + "\n")
		}
	case *awaitResume:
		b.WriteString(g.line(it.pos))
		lhs := "_"
		direct := false
		if it.ret || it.try != nil {
			lhs = g.value
		}
		if it.lhs != nil && it.lhs.Name != "_" {
			v, _ := g.info.ObjectOf(it.lhs).(*types.Var)
			if _, hoisted := g.hoisted[v]; !hoisted && it.define {
				lhs, direct = it.lhs.Name, true
			} else {
				lhs = g.value
			}
		}
		fmt.Fprintf(b, "%s, %s := %s.%s.Poll(%s)\nif !%s {\n%s.Suspended(%s)\nreturn\n}\n%s.%s = %s\n", lhs, g.ready, r, it.field, g.cx, g.ready, g.cx, g.awaitSite(it.pos), r, it.field, g.awZero[it.field])
		if it.lhs != nil && it.define && !direct {
			if v, _ := g.info.Defs[it.lhs].(*types.Var); g.isCell(v) {
				b.WriteString(g.newCell(v) + "\n")
			}
		}
		if it.lhs != nil && it.lhs.Name != "_" && !direct {
			op := "="
			if it.op != token.DEFINE && it.op != token.ASSIGN {
				op = it.op.String()
			}
			fmt.Fprintf(b, "%s %s %s\n", g.rewrite(it.lhs, nil), op, g.value)
		}
		if it.try != nil {
			// x, err := v.Value, v.Err: the rewrite declares or assigns
			// each variable as the source's statement does.
			as := &ast.AssignStmt{
				Lhs: append([]ast.Expr(nil), it.try.Lhs...), TokPos: it.try.TokPos, Tok: it.try.Tok,
				Rhs: []ast.Expr{ast.NewIdent(g.value + ".Value"), ast.NewIdent(g.value + ".Err")},
			}
			b.WriteString(g.rewrite(as, nil) + "\n")
		}
		switch {
		case it.ret && g.named != nil:
			fs := g.resultFields()
			if g.isTry(it.call) {
				fmt.Fprintf(b, "%s, %s = %s.Value, %s.Err\n", fs[0], fs[1], g.value, g.value)
			} else {
				fmt.Fprintf(b, "%s = %s\n", fs[0], g.value)
			}
			fmt.Fprintf(b, "%sreturn %s, true\n", g.done(), g.namedValue())
		case it.ret && g.isTry(it.call) && !types.Identical(g.info.TypeOf(it.call).(*types.Tuple).At(0).Type(), g.info.TypeOf(g.fn.Type.Results.List[0].Type)):
			// Try's T is assignable to the result's, not the same type.
			fmt.Fprintf(b, "%sreturn %s{Value: %s.Value, Err: %s.Err}, true\n", g.done(), g.resType, g.value, g.value)
		case it.ret:
			fmt.Fprintf(b, "%sreturn %s, true\n", g.done(), g.value)
		}
	case branchItem:
		b.WriteString(g.line(it.pos))
		g.labelUse = true
		fmt.Fprintf(b, "if %s {\n%s.state = %d\n} else {\n%s.state = %d\n}\ncontinue %s\n", g.rewrite(it.cond, nil), r, it.then.id, r, it.els.id, g.label)
	case loopHead:
		b.WriteString(g.line(it.pos))
		fmt.Fprintf(b, "if !(%s) {\n%s\n}\n", g.rewrite(it.cond, nil), g.jump(it.exit))
	case gotoItem:
		b.WriteString(g.line(it.pos))
		if last := blk.items[len(blk.items)-1]; it.to.id == blk.id+1 && last == any(it) {
			// The next case: no round through the loop and the dispatch.
			it.to.targeted = true
			fmt.Fprintf(b, "%s.state = %d\nfallthrough\n", r, it.to.id)
			break
		}
		b.WriteString(g.jump(it.to) + "\n")
	case switchItem:
		b.WriteString(g.line(it.s.Pos()))
		b.WriteString("switch ")
		_, head, body := switchParts(it.s)
		if it.tag != nil {
			head = it.tag
		}
		bound := ""
		if ts, ok := it.s.(*ast.TypeSwitchStmt); ok {
			if _, ok := ts.Assign.(*ast.AssignStmt); ok {
				bound = g.fresh("bound")
				b.WriteString(bound + " := ")
			}
			operand := typeSwitchOperand(ts)
			if it.tag != nil {
				operand = it.tag
			}
			b.WriteString(g.rewrite(operand, nil) + ".(type) ")
		} else if head != nil {
			b.WriteString(g.rewrite(head, nil) + " ")
		}
		b.WriteString("{\n")
		for i, c := range body.List {
			cc := c.(*ast.CaseClause)
			if cc.List == nil {
				b.WriteString("default:\n")
			} else {
				exprs := make([]string, len(cc.List))
				for j, e := range cc.List {
					exprs[j] = g.rewrite(e, nil)
				}
				b.WriteString(g.line(cc.Pos()))
				fmt.Fprintf(b, "case %s:\n", strings.Join(exprs, ", "))
			}
			if v, ok := g.info.Implicits[cc].(*types.Var); ok && bound != "" {
				if g.isCell(v) {
					fmt.Fprintf(b, "%s\n*%s.%s = %s\n", g.newCell(v), r, g.hoisted[v], bound)
				} else {
					fmt.Fprintf(b, "%s.%s = %s\n", r, g.hoisted[v], bound)
				}
			}
			fmt.Fprintf(b, "%s.state = %d\n", r, it.targets[i].id)
		}
		if it.join != nil {
			fmt.Fprintf(b, "default:\n%s.state = %d\n", r, it.join.id)
		}
		g.labelUse = true
		fmt.Fprintf(b, "}\ncontinue %s\n", g.label)
	case rangeInit:
		l := it.l
		b.WriteString(g.line(l.s.Pos()))
		if l.rng != "" {
			fmt.Fprintf(b, "%s.%s = %s\n", r, l.rng, g.rewrite(l.x, nil))
		} else if !l.direct {
			// Not evaluated, but a use, as in Go: a local that only the
			// range expression names would be unused in the case.
			ast.Inspect(l.x, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					if v, ok := g.info.Uses[id].(*types.Var); ok && !v.IsField() && v.Parent() != g.pkg.Scope() {
						if _, hoisted := g.hoisted[v]; !hoisted {
							fmt.Fprintf(b, "_ = %s\n", id.Name)
						}
					}
				}
				return true
			})
		}
		fmt.Fprintf(b, "%s = 0\n", g.rangeIndex(l))
	case rangeHead:
		l := it.l
		b.WriteString(g.line(l.s.Pos()))
		idx, rng := g.rangeIndex(l), g.rangeValue(l)
		limit := fmt.Sprintf("len(%s)", rng)
		switch {
		case l.kind == "int":
			limit = rng
		case !l.evaluated():
			limit = strconv.FormatInt(l.arrN, 10)
		}
		fmt.Fprintf(b, "if %s >= %s {\n%s\n}\n", idx, limit, g.jump(l.exit))
		value := ""
		switch l.kind {
		case "string":
			width := g.fresh("width")
			v := "_"
			if l.value {
				v = g.fresh("r")
				value = v
			}
			rest := fmt.Sprintf("%s[%s:]", rng, idx)
			if l.named {
				rest = "string(" + rest + ")"
			}
			fmt.Fprintf(b, "%s, %s := utf8.DecodeRuneInString(%s)\n%s.%s = %s + %s\n",
				v, width, rest, r, l.next, idx, width)
		case "slice", "array":
			value = fmt.Sprintf("%s[%s]", rng, idx)
		}
		if l.s.Tok == token.DEFINE {
			// Each iteration's own variables.
			for _, e := range []ast.Expr{l.s.Key, l.s.Value} {
				if id, ok := e.(*ast.Ident); ok {
					if v, _ := g.info.Defs[id].(*types.Var); g.isCell(v) {
						b.WriteString(g.newCell(v) + "\n")
					}
				}
			}
		}
		if l.s.Key != nil && !isBlank(l.s.Key) && !l.keyIdx {
			fmt.Fprintf(b, "%s %s %s\n", g.rewrite(l.s.Key, nil), g.rangeAssign(l.s, l.s.Key), idx)
		}
		if l.value {
			fmt.Fprintf(b, "%s %s %s\n", g.rewrite(l.s.Value, nil), g.rangeAssign(l.s, l.s.Value), value)
		}
	case rangeNext:
		l := it.l
		b.WriteString(g.line(l.s.Pos()))
		if l.kind == "string" {
			fmt.Fprintf(b, "%s = %s.%s\n", g.rangeIndex(l), r, l.next)
		} else {
			fmt.Fprintf(b, "%s++\n", g.rangeIndex(l))
		}
	case loopNext:
		g.emitLoopNext(b, it)
	case caseTest:
		g.emitCaseTest(b, it)
	case endItem:
		b.WriteString(g.line(it.pos))
		switch g.resKind {
		case 0:
			b.WriteString(g.done() + "return struct{}{}, true\n")
		default:
			b.WriteString(g.recv + ".state = -1\npanic(\"unreachable\")\n")
		}
	}
}

// nilAwait writes the answer to an await of a nil future, held in the
// interface field of it: future.Try gives the error future.ErrNilFuture,
// as a nil future given to a spawn or to BlockOn does, and future.Await,
// which has no error to give, panics with it (instead of a nil
// dereference in the Poll that follows).
func (g *emitter) nilAwait(b *strings.Builder, it awaitStart) {
	fmt.Fprintf(b, "if %s.%s == nil {\n", g.recv, it.field)
	if g.isTry(it.call) {
		t := g.typeString(g.info.TypeOf(it.call).(*types.Tuple).At(0).Type())
		fmt.Fprintf(b, "%s.%s = future.Ready(future.Fail[%s](future.ErrNilFuture))\n", g.recv, it.field, t)
	} else {
		b.WriteString("panic(future.ErrNilFuture)\n")
	}
	b.WriteString("}\n")
}

// sitesName is the package-level array of the function's await sites,
// named after its state machine as its local constants are, and taken
// among the package's names at its first use.
func (g *emitter) sitesName() string {
	if g.sitesVar == "" {
		g.sitesVar = freshIn(g.pkgNames(), g.typeName+"_sites")
	}
	return g.sitesVar
}

// awaitSite registers the await at pos and returns the expression of its
// site: an element of the function's array of sites, which registers each
// (future.NewAwaitSite) at package initialization.
func (g *emitter) awaitSite(pos token.Pos) string {
	p := g.pos(pos)
	fn := g.fn.Name.Name
	if t := recvTypeName(g.fn); t != "" {
		fn = t + "." + fn
	}
	g.sites = append(g.sites, fmt.Sprintf("future.NewAwaitSite(%q, %d, %q),\n", filepath.Base(p.Filename), p.Line, fn))
	return fmt.Sprintf("%s[%d]", g.sitesName(), len(g.sites)-1)
}
