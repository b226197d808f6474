package asyncgen

// Checks of the intermediate form, run after the passes that make it when
// Options.Check is set (see the top of passes.go). Each returns the
// invariants that do not hold, one message each; none changes anything.
//
// After lower (checkBlocks), the block form:
//
//   - blocks are numbered densely: blocks[i].id == i; block 0 is the entry,
//     targeted, and resumes no await;
//   - every block that becomes a case of Poll (targeted, or holding items)
//     ends in an item that does not fall through: a jump, a branch, a
//     dispatch, an await's start, the end of the function, a return of an
//     awaited value, or a copied statement that never falls through (a
//     return, a panic, a break or continue that becomes a jump, ...); a
//     jump, a branch, a dispatch, an await's start or the end is always
//     the last item of its block;
//   - every target of an item (the break and continue statements of copied
//     code included) is a block of the function, at its id, that becomes a
//     case;
//   - every await is resumed by the block it names, which starts with that
//     resume, is the target of no other await, and polls the same field;
//     the field is one of the awaited futures' fields; an await of a local
//     kept by value follows the local's declaration in the same block.
//
// After keep (checkKept), with the live sets of liveness.go:
//
//   - a variable live into block 0 is a parameter, the receiver or a named
//     result (nothing is read before it is written);
//   - a variable live into any block is kept (a field or a local of Poll):
//     a local of one case dies with the case;
//   - a variable live into a block that resumes an await is a field: a
//     local of Poll dies when Poll returns;
//   - every kept variable is a parameter, the receiver, a named result, a
//     type switch clause's variable or named by an item; every local of
//     Poll is named by two blocks or more.
//
// After cells (checkCells): every cell is a field of its own (not a local
// of Poll, not an awaited local sharing a field), declared in a lowered
// loop.
//
// After emit (checkEmitted), on the parsed code: the struct's fields have
// distinct names, none a method's; Poll's cases are the blocks emission
// recorded, ascending, each once (not dense: an empty block no jump
// reaches is left out); every state Poll assigns is one of its cases; every
// case of Cancel is a case of Poll that resumes an await.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

// invariantError is the error of a check that failed after pass.
func invariantError(g *gen, pass string, msgs []string) error {
	return fmt.Errorf("%s: %w after pass %s in %s: %s", g.pos(g.fn.Pos()), ErrInvariant, pass, g.fn.Name.Name, strings.Join(msgs, "; "))
}

// failures collects the messages of a check.
type failures []string

func (f *failures) add(format string, args ...any) { *f = append(*f, fmt.Sprintf(format, args...)) }

// becomesCase reports whether emission makes b a case of Poll (as it
// stands after lower: emission may mark more blocks targeted).
func becomesCase(b *block) bool { return b.targeted || len(b.items) > 0 }

// endsBlock reports whether item it never falls through to what follows.
func endsBlock(it any) bool {
	switch it := it.(type) {
	case gotoItem, branchItem, switchItem, awaitStart, endItem:
		return true
	case *awaitResume:
		return it.ret
	case stmtItem:
		return terminates(it.s)
	}
	return false
}

// itemKind names the kind of an item, for messages and the dump.
func itemKind(it any) string {
	switch it.(type) {
	case stmtItem:
		return "statement"
	case awaitStart:
		return "await"
	case *awaitResume:
		return "resume"
	case branchItem:
		return "branch"
	case loopHead:
		return "loop test"
	case gotoItem:
		return "jump"
	case endItem:
		return "end"
	case switchItem:
		return "dispatch"
	case caseTest:
		return "case test"
	case rangeInit:
		return "range init"
	case rangeHead:
		return "range head"
	case rangeNext:
		return "range next"
	case loopNext:
		return "loop next"
	}
	return fmt.Sprintf("%T", it)
}

// checkBlocks checks the block form after lower.
func checkBlocks(g *gen) []string {
	var bad failures
	if len(g.blocks) == 0 {
		bad.add("no blocks")
		return bad
	}
	for i, b := range g.blocks {
		if b.id != i {
			bad.add("block at %d has id %d", i, b.id)
		}
	}
	if b0 := g.blocks[0]; !b0.targeted || b0.resume != nil {
		bad.add("block 0 is not the entry (targeted %v, resumes %v)", b0.targeted, b0.resume != nil)
	}
	startedBy := map[*block]int{}
	for _, b := range g.blocks {
		if !becomesCase(b) {
			continue
		}
		if len(b.items) == 0 || !endsBlock(b.items[len(b.items)-1]) {
			last := "nothing"
			if len(b.items) > 0 {
				last = "a " + itemKind(b.items[len(b.items)-1])
			}
			bad.add("block %d ends in %s, which falls through", b.id, last)
		}
		for i, it := range b.items {
			switch it.(type) {
			case gotoItem, branchItem, switchItem, awaitStart, endItem:
				if i != len(b.items)-1 {
					bad.add("block %d: a %s at item %d of %d, before the end of the block", b.id, itemKind(it), i+1, len(b.items))
				}
			}
			for _, t := range g.successors(it) {
				switch {
				case t == nil:
					bad.add("block %d: a %s jumps to no block", b.id, itemKind(it))
				case t.id < 0 || t.id >= len(g.blocks) || g.blocks[t.id] != t:
					bad.add("block %d: a %s jumps to block %d, which is not the function's", b.id, itemKind(it), t.id)
				case !becomesCase(t):
					bad.add("block %d: a %s jumps to block %d, which is not a case", b.id, itemKind(it), t.id)
				}
			}
			switch it := it.(type) {
			case awaitStart:
				startedBy[it.resume]++
				if it.resume == nil || it.resume.resume == nil {
					bad.add("block %d: an await whose block resumes nothing", b.id)
				} else if it.resume.resume.field != it.field {
					bad.add("block %d: an await of field %s resumed from field %s", b.id, it.field, it.resume.resume.field)
				}
				if _, ok := g.awType[it.field]; !ok {
					bad.add("block %d: an await of %s, which is not an awaited future's field", b.id, it.field)
				}
				if g.awValue[it.field] && !g.awMoved[it.field] && !g.declaresAwaited(b.items[:i], it.field) {
					bad.add("block %d: an await of the local kept in %s before its declaration in the block", b.id, it.field)
				}
			case *awaitResume:
				if i != 0 || b.resume != it {
					bad.add("block %d: a resume at item %d that is not the block's own", b.id, i+1)
				}
			}
		}
	}
	for _, b := range g.blocks {
		if b.resume != nil && startedBy[b] != 1 {
			bad.add("block %d resumes an await that %d awaits start", b.id, startedBy[b])
		}
	}
	return bad
}

// declaresAwaited reports whether items declare a local that is held in
// the awaited future's field.
func (g *gen) declaresAwaited(items []any, field string) bool {
	for _, it := range items {
		si, ok := it.(stmtItem)
		if !ok {
			continue
		}
		for v, f := range g.awLocals {
			if f == field && g.declares(si.s, v) {
				return true
			}
		}
	}
	return false
}

// checkKept checks where keep put the variables, against the live sets.
func checkKept(g *gen) []string {
	var bad failures
	ls := g.liveness()
	own := g.ownParams()
	kept := func(v *types.Var) bool { _, ok := g.hoisted[v]; return ok }
	for _, b := range g.blocks {
		for _, v := range sortedVars(ls.in[b.id]) {
			switch {
			case b.id == 0 && !own[v]:
				bad.add("%s is live into block 0: read before it is written", v.Name())
			case !kept(v):
				bad.add("%s is live into block %d but is a local of one case", v.Name(), b.id)
			case b.resume != nil && g.pollLocal[v]:
				bad.add("%s is live across the await block %d resumes but is a local of Poll", v.Name(), b.id)
			}
		}
	}
	named, _ := g.blocksNaming()
	for _, v := range g.hoistList {
		if !own[v] && !slices.Contains(g.implicit, v) && len(named[v]) == 0 {
			bad.add("%s is kept in field %s but no block names it", v.Name(), g.hoisted[v])
		}
	}
	for _, v := range g.pollList {
		if len(named[v]) < 2 {
			bad.add("%s is a local of Poll but %d blocks name it", v.Name(), len(named[v]))
		}
	}
	return bad
}

// ownParams returns the parameters, the receiver and the named results:
// the variables that hold a value before block 0 runs.
func (g *gen) ownParams() varSet {
	out := varSet{}
	lists := []*ast.FieldList{g.fn.Recv, g.fn.Type.Params, g.fn.Type.Results}
	for _, fl := range lists {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, id := range f.Names {
				if v, ok := g.info.Defs[id].(*types.Var); ok {
					out[v] = true
				}
			}
		}
	}
	return out
}

// checkCells checks the cells after cells.
func checkCells(g *gen) []string {
	var bad failures
	for v := range g.cells {
		if !slices.Contains(g.hoistList, v) || g.pollLocal[v] || g.shared[v] {
			bad.add("%s is a cell but not a field of its own", v.Name())
		}
		if !g.inLoop(v) {
			bad.add("%s is a cell but is declared in no lowered loop", v.Name())
		}
	}
	slices.Sort(bad)
	return bad
}

// checkEmitted checks the code emission wrote, parsed.
func checkEmitted(g *gen) []string {
	var bad failures
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+g.out.code, parser.SkipObjectResolution)
	if err != nil {
		bad.add("the code does not parse: %v", err)
		return bad
	}
	methods := map[string]bool{"Poll": true, "Cancel": true}
	if g.defers != "" {
		methods["poll"], methods["runDefers"] = true, true
	}
	var pollCases, cancelCases []int
	var states []int
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || ts.Name.Name != g.typeName {
					continue
				}
				seen := map[string]bool{}
				for _, fl := range ts.Type.(*ast.StructType).Fields.List {
					for _, id := range fl.Names {
						if seen[id.Name] || methods[id.Name] {
							bad.add("the struct has a second %s", id.Name)
						}
						seen[id.Name] = true
					}
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil || d.Body == nil {
				continue
			}
			name := d.Name.Name
			ast.Inspect(d.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // copied code
				case *ast.SwitchStmt:
					if !g.isState(n.Tag) {
						return true
					}
					for _, c := range n.Body.List {
						for _, e := range c.(*ast.CaseClause).List {
							k, ok := intLit(e)
							switch {
							case !ok:
							case name == "Cancel":
								cancelCases = append(cancelCases, k)
							case name == "Poll" || name == "poll":
								if k >= 0 {
									pollCases = append(pollCases, k)
								}
							}
						}
					}
				case *ast.AssignStmt:
					if len(n.Lhs) == 1 && g.isState(n.Lhs[0]) && (name == "Poll" || name == "poll") {
						if k, ok := intLit(n.Rhs[0]); ok && k >= 0 {
							states = append(states, k)
						}
					}
				}
				return true
			})
		}
	}
	if !slices.Equal(pollCases, g.out.cases) {
		bad.add("Poll's cases are %v, emission recorded %v", pollCases, g.out.cases)
	}
	if !slices.IsSorted(pollCases) || len(slices.Compact(slices.Clone(pollCases))) != len(pollCases) {
		bad.add("Poll's cases %v are not ascending, each once", pollCases)
	}
	for _, k := range states {
		if !slices.Contains(pollCases, k) {
			bad.add("Poll sets state %d, which is not one of its cases", k)
		}
	}
	for _, k := range cancelCases {
		if !slices.Contains(pollCases, k) || k >= len(g.blocks) || g.blocks[k].resume == nil {
			bad.add("Cancel has a case %d that is not a case of Poll resuming an await", k)
		}
	}
	for _, b := range g.blocks {
		if b.resume != nil && !slices.Contains(pollCases, b.id) {
			bad.add("block %d resumes an await but is not a case of Poll", b.id)
		}
	}
	return bad
}

// isState reports whether e is the state machine's state field, f.state.
func (g *gen) isState(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "state" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == g.recv
}

// intLit returns the value of an integer literal, negated or not.
func intLit(e ast.Expr) (int, bool) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		e, neg = u.X, true
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, false
	}
	k, err := strconv.Atoi(lit.Value)
	if err != nil {
		return 0, false
	}
	if neg {
		k = -k
	}
	return k, true
}

// sortedVars returns the variables of s by their position, then name.
func sortedVars(s varSet) []*types.Var {
	out := make([]*types.Var, 0, len(s))
	for v := range s {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *types.Var) int {
		if a.Pos() != b.Pos() {
			return int(a.Pos() - b.Pos())
		}
		return strings.Compare(a.Name(), b.Name())
	})
	return out
}
