package asyncgen

// The select over futures. An async function waits for one of several
// futures with Go's select statement, each case receiving from the marker
// future.On(f) (the select owns f) or future.OnKeep(f) (it does not):
//
//	select {
//	case t := <-future.OnKeep(iv):
//		...
//	case r := <-future.On(jobs.Recv()):
//		...
//	default:
//		...
//	}
//
// Before the type-checked load, such a select is rewritten, in the source
// that the load reads (an overlay; the file on disk is not touched), into
// statements the later passes already compile: the operands evaluated in
// order into the cases of a future.Selecting kept by the function, one
// await of the select, and a switch on the winner:
//
//	{ c0 := future.AddCase(&sel, 0, iv, false); c1 := future.AddCase(&sel, 1, jobs.Recv(), true); future.Await(sel.Wait(true)); switch sel.Winner() {
//	case 0: t := c0.Value();
//		...
//	case 1: r := c1.Value();
//		...
//	default:
//		...
//	}}
//
// with sel declared at the top of the function body, so that it is a field
// of the state machine, reused by every execution of the select (its cases'
// storage, and the turn that decides which case is tried first). Every
// line keeps its number, so that positions, //line directives and panics
// name the source's lines. A select that cannot be rewritten (a case of
// another kind, two values received, an operand over several lines) is
// left as it is, and the leftover markers are rejected with the reason
// (rejectSelectMarkers).

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"sort"
	"strconv"
	"strings"
)

// selectRefusal is why a select over futures was left as written.
type selectRefusal struct {
	pos token.Position
	msg string
}

// textEdit replaces src[start:end] with text.
type textEdit struct {
	start, end int
	text       string
}

// desugarSelects returns the source of file (named name) with every select
// over futures and every range over future.Each (eachsugar.go) in its
// async functions rewritten, or nil if it has none;
// and the selects it left as written, with the reason. The file's text is
// loaded, unless it is given (an overlay's).
func desugarSelects(fset *token.FileSet, file *ast.File, name string, loaded []byte) ([]byte, []selectRefusal, error) {
	fut := futureImportName(file)
	if fut == "" {
		return nil, nil, nil
	}
	var edits []textEdit
	var refusals []selectRefusal
	n := 0
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !isAsync(fn) || fn.Body == nil {
			continue
		}
		labels := map[ast.Stmt]*ast.LabeledStmt{}
		var decls []string
		ast.Inspect(fn.Body, func(nd ast.Node) bool {
			switch nd := nd.(type) {
			case *ast.FuncLit:
				return false // an await there is refused anyway
			case *ast.LabeledStmt:
				labels[nd.Stmt] = nd
			case *ast.RangeStmt:
				if next, ok := eachOperand(fut, nd.X); ok && nd.Value == nil {
					n++
					edits = append(edits, rewriteEach(fset, fut, n, fn, nd, next)...)
				}
			case *ast.SelectStmt:
				cases, why := selectCases(fset, fut, nd)
				if cases == nil && why == "" {
					return true // a select over channels
				}
				if why != "" {
					refusals = append(refusals, selectRefusal{fset.Position(nd.Pos()), why})
					return true
				}
				n++
				sel := "blitzgenSel" + strconv.Itoa(n)
				decls = append(decls, "var "+sel+" "+qualified(fut, "Selecting")+";")
				edits = append(edits, rewriteSelect(fset, fut, sel, nd, labels[nd], cases)...)
			}
			return true
		})
		if len(decls) > 0 {
			at := fset.Position(fn.Body.Lbrace).Offset + 1
			edits = append(edits, textEdit{at, at, " " + strings.Join(decls, " ")})
		}
	}
	if len(edits) == 0 {
		return nil, refusals, nil
	}
	src := bytes.Clone(loaded)
	if src == nil {
		var err error
		if src, err = os.ReadFile(name); err != nil {
			return nil, nil, fmt.Errorf("blitzgen: %w", err)
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	for _, e := range edits {
		if e.end > len(src) || e.start > e.end {
			return nil, nil, fmt.Errorf("blitzgen: %s changed while it was read", name)
		}
		src = append(src[:e.start], append([]byte(e.text), src[e.end:]...)...)
	}
	return src, refusals, nil
}

// futureImportName is the name under which file imports the future
// package: "." for a dot import, "" if it does not.
func futureImportName(file *ast.File) string {
	for _, imp := range file.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err != nil || p != futurePath {
			continue
		}
		if imp.Name == nil {
			return "future"
		}
		if imp.Name.Name != "_" {
			return imp.Name.Name
		}
	}
	return ""
}

// qualified is the name of the future package's identifier id in a file
// that imports it as fut.
func qualified(fut, id string) string {
	if fut == "." {
		return id
	}
	return fut + "." + id
}

// selectCase is one clause of a select over futures.
type selectCase struct {
	clause  *ast.CommClause
	operand ast.Expr        // the future; nil for default
	owned   bool            // future.On (true) or future.OnKeep
	assign  *ast.AssignStmt // v := <-future.On(f) or v = ..., nil otherwise
}

// selectCases returns the clauses of s when it is a select over futures,
// nil if it is a select over channels; why says why a select over futures
// cannot be rewritten.
func selectCases(fset *token.FileSet, fut string, s *ast.SelectStmt) (cases []selectCase, why string) {
	markers, others := 0, 0
	for _, st := range s.Body.List {
		cc := st.(*ast.CommClause)
		c := selectCase{clause: cc}
		var recv ast.Expr
		switch comm := cc.Comm.(type) {
		case nil:
		case *ast.ExprStmt:
			recv = comm.X
		case *ast.AssignStmt:
			c.assign = comm
			recv = comm.Rhs[0]
		}
		if cc.Comm != nil {
			op, owned, ok := markerOperand(fut, recv)
			if !ok {
				others++
				continue
			}
			markers++
			c.operand, c.owned = op, owned
			if c.assign != nil && len(c.assign.Lhs) != 1 {
				why = "a case of a select over futures that receives two values is not supported in an async function; write v := <-future.On(f) (the future's one value; a Result carries its error) instead"
			}
			if fset.Position(op.Pos()).Line != fset.Position(op.End()).Line {
				why = "a case of a select over futures whose future spans several lines is not supported in an async function; write the future on one line, or make it in a variable before the select and give the variable to future.On, instead"
			}
		}
		cases = append(cases, c)
	}
	if markers == 0 {
		return nil, ""
	}
	if others > 0 {
		return nil, "a select over futures with a case of another kind (a Go channel, a send) is not supported in an async function; write every case as a receive from future.On(f) or future.OnKeep(f), with the futures of package channels in place of Go's channels, instead"
	}
	if why != "" {
		return nil, why
	}
	return cases, ""
}

// markerOperand returns f when e is <-future.On(f) or <-future.OnKeep(f)
// (owned for On), with or without explicit type arguments.
func markerOperand(fut string, e ast.Expr) (f ast.Expr, owned, ok bool) {
	u, isRecv := ast.Unparen(e).(*ast.UnaryExpr)
	if !isRecv || u.Op != token.ARROW {
		return nil, false, false
	}
	call, name := futureCall(fut, u.X)
	if call == nil {
		return nil, false, false
	}
	switch name {
	case "On":
		return call.Args[0], true, true
	case "OnKeep":
		return call.Args[0], false, true
	}
	return nil, false, false
}

// futureCall returns e as a call of one argument of a function of the
// future package, imported as fut, and that function's name, with or
// without explicit type arguments: (nil, "") for anything else. Before the
// load there are no types: the name is what the source writes.
func futureCall(fut string, e ast.Expr) (*ast.CallExpr, string) {
	call, isCall := ast.Unparen(e).(*ast.CallExpr)
	if !isCall || len(call.Args) != 1 || call.Ellipsis.IsValid() {
		return nil, ""
	}
	fun := ast.Unparen(call.Fun)
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	switch x := fun.(type) {
	case *ast.Ident:
		if fut == "." {
			return call, x.Name
		}
	case *ast.SelectorExpr:
		if id, isIdent := x.X.(*ast.Ident); isIdent && fut != "." && id.Name == fut {
			return call, x.Sel.Name
		}
	}
	return nil, ""
}

// rewriteSelect returns the edits that rewrite s (see the top of this
// file), sel being the name of its Selecting and label its label, if any.
func rewriteSelect(fset *token.FileSet, fut, sel string, s *ast.SelectStmt, label *ast.LabeledStmt, cases []selectCase) []textEdit {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	src := func(e ast.Node) string { return printNode(fset, e) }
	var head strings.Builder
	head.WriteString("{ ")
	hasDefault := false
	k := 0
	caseVar := map[*ast.CommClause]string{}
	for _, c := range cases {
		if c.operand == nil {
			hasDefault = true
			continue
		}
		add := fmt.Sprintf("%s(&%s, %d, %s, %t);", qualified(fut, "AddCase"), sel, k, src(c.operand), c.owned)
		if c.assign != nil && !isBlank(c.assign.Lhs[0]) {
			v := sel + "c" + strconv.Itoa(k)
			caseVar[c.clause] = v
			add = v + " := " + add
		}
		head.WriteString(add + " ")
		k++
	}
	fmt.Fprintf(&head, "%s(%s.Wait(%t)); ", qualified(fut, "Await"), sel, hasDefault)
	var edits []textEdit
	if label != nil {
		// The label moves to the switch, which break L leaves as it left
		// the select.
		edits = append(edits, textEdit{off(label.Label.Pos()), off(label.Colon) + 1, ""})
		head.WriteString(label.Label.Name + ": ")
	}
	fmt.Fprintf(&head, "switch %s.Winner() {", sel)
	edits = append(edits, textEdit{off(s.Select), off(s.Body.Lbrace) + 1, head.String()})
	// The user's default clause is the switch's default; without one, the
	// last case is (the winner is always one of the cases): so the switch
	// terminates exactly when the select did, as Go's rules for a
	// function's final statement see it.
	last := -1
	if !hasDefault {
		last = k - 1
	}
	k = 0
	for _, c := range cases {
		cc := c.clause
		var text string
		switch {
		case c.operand == nil:
			text = "default:"
		case k == last:
			text = "default:"
		default:
			text = "case " + strconv.Itoa(k) + ":"
		}
		if c.operand != nil {
			if v, ok := caseVar[cc]; ok {
				text += " " + src(c.assign.Lhs[0]) + " " + c.assign.Tok.String() + " " + v + ".Value();"
			}
			k++
		}
		edits = append(edits, textEdit{off(cc.Case), off(cc.Colon) + 1, text})
	}
	edits = append(edits, textEdit{off(s.Body.Rbrace), off(s.Body.Rbrace) + 1, "}}"})
	return edits
}

// selectSugar adds to overlay the rewritten source of file, if it has a
// select over futures, and to refused the selects it left as written, by
// position (positionKey).
func selectSugar(fset *token.FileSet, file *ast.File, overlay map[string][]byte, refused map[string]string) error {
	name := fset.File(file.Pos()).Name()
	src, refusals, err := desugarSelects(fset, file, name, overlay[name])
	if err != nil {
		return err
	}
	for _, r := range refusals {
		refused[positionKey(r.pos)] = r.msg
	}
	if src != nil {
		overlay[name] = src
	}
	return nil
}

// positionKey identifies a position across the two loads of a file.
func positionKey(p token.Position) string {
	return p.Filename + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

// markerRefusal is the message for a leftover select marker at pos: the
// recorded reason its select was left as written, or the general rule.
func markerRefusal(refused map[string]string, selectPos token.Position) string {
	if msg, ok := refused[positionKey(selectPos)]; ok {
		return msg
	}
	return "future.On or future.OnKeep other than as the case of a select over futures is not supported in an async function (it would panic); write select { case v := <-future.On(f): ... }, or future.Await(f), instead"
}

// isSelectMarker reports whether obj is future.On or future.OnKeep.
func isSelectMarker(obj types.Object) bool {
	return isFutureFunc(obj, "On") || isFutureFunc(obj, "OnKeep")
}

// rejectSelectMarkers is pass 4d (select): the selects over futures were
// rewritten before the load, so a marker still in the body is one the
// rewrite left (its select's reason is reported) or one outside a select's
// case, which would panic at run time.
func (g *gen) rejectSelectMarkers() {
	g.moveSelectOperands()
	g.rejectEachCopies()
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		// Hoisted before the load (asynclit.go): one left here is one the
		// hoisting refused, and reported.
		if call, ok := n.(*ast.CallExpr); ok && asyncLiteralCall(g.info, call) {
			if _, told := g.refused[positionKey(g.pos(call.Pos()))]; told {
				g.errs = append(g.errs, errToldAlready)
				return false
			}
			g.reject(call.Pos(), "this async function literal was not compiled (future.%s is replaced before the load; see the error reported for it); write the work as an async function of its own instead", markerName(g.info, call))
			return false
		}
		return true
	})
	var stack []ast.Node
	reported := map[*ast.SelectStmt]bool{}
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		var id *ast.Ident
		switch x := n.(type) {
		case *ast.Ident:
			id = x
		case *ast.SelectorExpr:
			id = x.Sel
		}
		if id != nil && isFutureFunc(g.info.Uses[id], "Each") {
			g.reject(id.Pos(), "future.Each other than as the range expression of a for statement (for v := range future.Each(next) { ... }) is not supported in an async function (it would panic); write the loop that way, or await each value with future.Try(next()), instead")
			return false
		}
		if id == nil || !isSelectMarker(g.info.Uses[id]) {
			return true
		}
		for i := len(stack) - 1; i >= 0; i-- {
			if s, ok := stack[i].(*ast.SelectStmt); ok {
				if !reported[s] {
					reported[s] = true
					g.reject(s.Pos(), "%s", markerRefusal(g.refused, g.fset.Position(s.Pos())))
				}
				return false
			}
		}
		g.reject(id.Pos(), "%s", markerRefusal(nil, token.Position{}))
		return false
	})
}

// isSelectSwitch reports whether s is the switch of a rewritten select
// over futures (switch sel.Winner() { ... }), labeled or not. It is lowered
// even without an await in its clauses, so that each statement of a
// clause, after the received value's assignment that the rewrite put on
// the case's line, carries its own line (a switch copied whole would be
// printed one line longer per clause that receives a value).
func (g *gen) isSelectSwitch(s ast.Stmt) bool {
	if l, ok := s.(*ast.LabeledStmt); ok {
		s = l.Stmt
	}
	sw, ok := s.(*ast.SwitchStmt)
	if !ok || sw.Init != nil {
		return false
	}
	call, ok := ast.Unparen(sw.Tag).(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Winner" {
		return false
	}
	named, ok := types.Unalias(g.info.TypeOf(sel.X)).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == futurePath && named.Obj().Name() == "Selecting"
}

// moveSelectOperands makes each case of a select over futures whose
// future the select owns and that is a call returning a new Movable *F
// (future.On(ch.Recv())) add its case with future.AddMovedCase, which
// copies the future into the case's own storage, reused by every
// execution: the pointer the call returns does not escape, so that the
// select allocates nothing. Part of pass 4d.
func (g *gen) moveSelectOperands() {
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 4 || !isFutureFunc(g.calledFunc(call.Fun), "AddCase") {
			return true
		}
		if owned, ok := g.info.Types[call.Args[3]]; !ok || owned.Value == nil || owned.Value.String() != "true" {
			return true // OnKeep: the future must outlive the select, where its owner keeps it
		}
		elem := g.movedFuture(call.Args[2])
		if elem == nil {
			return true
		}
		sig, ok := g.info.TypeOf(call.Fun).(*types.Signature)
		if !ok || sig.Results().Len() != 1 {
			return true
		}
		res, ok := sig.Results().At(0).Type().(*types.Pointer)
		if !ok {
			return true
		}
		named, ok := types.Unalias(res.Elem()).(*types.Named)
		if !ok || named.TypeArgs().Len() != 1 {
			return true
		}
		t := named.TypeArgs().At(0)
		fun := &ast.Ident{NamePos: call.Fun.Pos(), Name: "future.AddMovedCase[" + g.typeString(t) + ", " + g.typeString(elem) + "]"}
		call.Fun = fun
		return true
	})
}
