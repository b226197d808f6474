package asyncgen

// Per-iteration variables. Go gives each iteration of a loop its own
// variables (a 3-clause for loop copies the previous iteration's before the
// post statement); the state machine has one field per variable. The two
// differ only if something keeps a reference to one iteration's variable: a
// function literal that captures it, its address, a pointer method called on
// it, a slice of it (an array). Such a variable, when it is a field and is
// declared inside a lowered loop, is a cell: its field is a pointer, and
// every execution of its declaration points it at a new variable
// (f.x = new(T)). Code refers to it as (*f.x); a function literal refers
// to it through a local copy of the pointer taken just before the item
// that holds the literal (xc := f.x), so that it keeps its iteration's
// variable after the field moves on. The pointer can change only where the
// variable is declared, which in source order comes before every literal
// that sees it, and a case of Poll never runs two iterations (the loop's
// back edge is a jump to another case), so one copy per case suffices.

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// markCells finds the cells: hoisted variables declared in a lowered loop
// that a function literal captures, whose address is taken, whose pointer
// method is called or that are sliced (an array), directly or through
// their struct fields and array elements.
func (g *gen) markCells() {
	g.cells = map[*types.Var]string{}
	perIter := func(id *ast.Ident) (*types.Var, bool) {
		v, ok := g.info.Uses[id].(*types.Var)
		if !ok {
			return nil, false
		}
		_, hoisted := g.hoisted[v]
		_, awaited := g.awLocals[v] // its field is assigned at each declaration
		return v, hoisted && !awaited && !g.pollLocal[v] && g.inLoop(v)
	}
	mark := func(id *ast.Ident) {
		if v, ok := perIter(id); ok {
			if _, done := g.cells[v]; !done {
				g.cells[v] = g.fresh(v.Name())
			}
		}
	}
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			ast.Inspect(n.Body, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok {
					mark(id)
				}
				return true
			})
			return false
		case *ast.SliceExpr:
			if _, arr := g.info.TypeOf(n.X).Underlying().(*types.Array); arr {
				if id := g.storageRoot(n.X); id != nil {
					mark(id)
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				if id := g.storageRoot(n.X); id != nil {
					mark(id)
				}
			}
		case *ast.SelectorExpr:
			if sel, ok := g.info.Selections[n]; ok && sel.Kind() == types.MethodVal {
				recv := sel.Obj().Type().(*types.Signature).Recv()
				_, ptrRecv := recv.Type().(*types.Pointer)
				_, ptrX := g.info.TypeOf(n.X).Underlying().(*types.Pointer)
				if ptrRecv && !ptrX {
					if id := g.storageRoot(n.X); id != nil {
						mark(id)
					}
				}
			}
		}
		return true
	})
}

// cellRef is the expression for cell v: (*f.x), or (*xc) inside a
// function literal, which then needs the copy xc := f.x before its item.
func (g *emitter) cellRef(v *types.Var, pos token.Pos, inLit bool) ast.Expr {
	var ptr ast.Expr = &ast.SelectorExpr{
		X:   &ast.Ident{Name: g.recv, NamePos: pos},
		Sel: &ast.Ident{Name: g.hoisted[v], NamePos: pos},
	}
	if inLit {
		g.captures = append(g.captures, v)
		ptr = &ast.Ident{Name: g.cells[v], NamePos: pos}
	}
	ref := &ast.ParenExpr{Lparen: pos, X: &ast.StarExpr{Star: pos, X: ptr}}
	if g.cellDerefs == nil {
		g.cellDerefs = map[ast.Expr]bool{}
	}
	g.cellDerefs[ref] = true
	return ref
}

// newCell is the statement that points cell v's field at a new variable.
func (g *emitter) newCell(v *types.Var) string {
	return g.recv + "." + g.hoisted[v] + " = new(" + g.typeString(v.Type()) + ")"
}

// isCell reports whether v is a cell.
func (k *kept) isCell(v *types.Var) bool {
	_, ok := k.cells[v]
	return v != nil && ok
}

// cellDefs returns the cells that an assignment s declares (x := e).
func (g *emitter) cellDefs(s *ast.AssignStmt) []*types.Var {
	if s.Tok != token.DEFINE {
		return nil
	}
	var out []*types.Var
	for _, l := range s.Lhs {
		if id, ok := l.(*ast.Ident); ok {
			if v, ok := g.info.Defs[id].(*types.Var); ok && g.isCell(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// insertNewCells puts the new-cell statements of vars before the cursor's
// statement.
func (g *emitter) insertNewCells(c *astutil.Cursor, vars []*types.Var) {
	for _, v := range vars {
		c.InsertBefore(raw(g.newCell(v)))
	}
}

// takeCaptures returns the copies of the cells' pointers that the last
// item's function literals need, declaring each once per case (declared
// holds the ones declared in the current case).
func (g *emitter) takeCaptures(declared map[*types.Var]bool) string {
	var b strings.Builder
	for _, v := range g.captures {
		if !declared[v] {
			declared[v] = true
			b.WriteString(g.cells[v] + " := " + g.recv + "." + g.hoisted[v] + "\n")
		}
	}
	g.captures = g.captures[:0]
	return b.String()
}

// loopNext is the start of a 3-clause for loop's post block: each
// iteration after the first gets a new copy of the variables the init
// declares (Go 1.22's rule), which matters for cells.
type loopNext struct{ vars []*types.Var } // the variables the init declares

// loopVars returns the variables that a for loop's init declares, taken
// before the rewrite changes the statement.
func (g *gen) loopVars(init ast.Stmt) []*types.Var {
	as, ok := init.(*ast.AssignStmt)
	if !ok || as.Tok != token.DEFINE {
		return nil
	}
	var out []*types.Var
	for _, l := range as.Lhs {
		if id, ok := l.(*ast.Ident); ok {
			if v, ok := g.info.Defs[id].(*types.Var); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func (g *emitter) emitLoopNext(b *strings.Builder, it loopNext) {
	for _, v := range it.vars {
		if !g.isCell(v) {
			continue
		}
		old := g.fresh("prev")
		f := g.recv + "." + g.hoisted[v]
		b.WriteString("{\n" + old + " := " + f + "\n" + g.newCell(v) + "\n*" + f + " = *" + old + "\n}\n")
	}
}
