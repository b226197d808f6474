package asyncgen

// Liveness of the block form, for the checks (check.go) and the dump
// (dump.go); no pass reads it, so that checking and dumping change nothing
// in what is generated. It is the textbook backward analysis over the
// blocks: a variable is live at a point if some path from there reads it
// before writing it. Within a block the items run in order; an item reads
// its uses before it writes its definitions; the blocks a block goes on at
// are the targets of its items' jumps, the resume block of its await
// included (the value must outlive the suspension).
//
// It is as precise as keep's own test (polllocal.go) or more: a variable
// declared inside a copied statement (a loop's, a literal's, a clause's) is
// that statement's alone, a plain x = e writes x without reading it, a
// range loop's = assigns its variables, and a copied statement goes on only
// at the blocks its own break and continue statements name.

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// varSet is a set of the function's variables.
type varSet map[*types.Var]bool

// liveSets holds the variables live into and out of each block, by id.
type liveSets struct{ in, out []varSet }

// liveness computes the live sets of g's blocks. Called by the checks and
// the dump, after lower.
func (g *gen) liveness() *liveSets {
	n := len(g.blocks)
	ls := &liveSets{in: make([]varSet, n), out: make([]varSet, n)}
	for i := range n {
		ls.in[i], ls.out[i] = varSet{}, varSet{}
	}
	type effect struct {
		uses, defs []*types.Var
		succ       []*block
	}
	effects := make([][]effect, n)
	for _, b := range g.blocks {
		for _, it := range b.items {
			uses, defs := g.itemEffects(it)
			effects[b.id] = append(effects[b.id], effect{uses, defs, g.successors(it)})
		}
	}
	for changed := true; changed; {
		changed = false
		for i := n - 1; i >= 0; i-- {
			out := varSet{}
			live := varSet{}
			es := effects[i]
			for k := len(es) - 1; k >= 0; k-- {
				for _, s := range es[k].succ {
					if s == nil || s.id < 0 || s.id >= n {
						continue
					}
					for v := range ls.in[s.id] {
						out[v] = true
						live[v] = true
					}
				}
				for _, v := range es[k].defs {
					delete(live, v)
				}
				for _, v := range es[k].uses {
					live[v] = true
				}
			}
			if len(live) != len(ls.in[i]) || len(out) != len(ls.out[i]) {
				changed = true
			}
			ls.in[i], ls.out[i] = live, out
		}
	}
	return ls
}

// itemEffects returns the variables of the function that item it reads
// (before it writes any) and those it writes, each once, in the order the
// item names them.
func (g *gen) itemEffects(it any) (uses, defs []*types.Var) {
	use := func(v *types.Var) {
		if v != nil && !slices.Contains(uses, v) {
			uses = append(uses, v)
		}
	}
	def := func(v *types.Var) {
		if v != nil && !slices.Contains(defs, v) {
			defs = append(defs, v)
		}
	}
	// read adds the variables n reads: those it names, but for the
	// identifiers in skip (written) and the variables in own (declared
	// in n).
	read := func(n ast.Node, skip map[*ast.Ident]bool, own varSet) {
		if n == nil {
			return
		}
		if own == nil {
			// The variables n declares itself (a function literal's
			// parameters and locals, in an await's operand or a
			// condition) are not read from outside it.
			ast.Inspect(n, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok {
					if v, ok := g.localVar(g.info.Defs[id]); ok {
						if own == nil {
							own = varSet{}
						}
						own[v] = true
					}
				}
				return true
			})
		}
		ast.Inspect(n, func(m ast.Node) bool {
			if id, ok := m.(*ast.Ident); ok && !skip[id] {
				if v, ok := g.localVar(g.info.Uses[id]); ok && !own[v] {
					use(v)
				}
			}
			return true
		})
	}
	// plain returns the variable that e is, if e is an identifier of one.
	plain := func(e ast.Expr) (*ast.Ident, *types.Var) {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return nil, nil
		}
		obj := g.info.Defs[id]
		if obj == nil {
			obj = g.info.Uses[id]
		}
		if v, ok := g.localVar(obj); ok {
			return id, v
		}
		return nil, nil
	}
	switch it := it.(type) {
	case stmtItem:
		own := varSet{}
		var ownList []*types.Var
		ast.Inspect(it.s, func(m ast.Node) bool {
			var obj types.Object
			switch m := m.(type) {
			case *ast.Ident:
				obj = g.info.Defs[m]
			case *ast.CaseClause:
				obj = g.info.Implicits[m] // a copied type switch's clause variable
			}
			if v, ok := g.localVar(obj); ok && !own[v] {
				own[v] = true
				ownList = append(ownList, v)
			}
			return true
		})
		skip := map[*ast.Ident]bool{}
		var written []*types.Var
		if a, ok := it.s.(*ast.AssignStmt); ok && (a.Tok == token.ASSIGN || a.Tok == token.DEFINE) {
			for _, l := range a.Lhs {
				if id, v := plain(l); v != nil {
					skip[id] = true
					written = append(written, v)
				}
			}
		}
		read(it.s, skip, own)
		for _, v := range ownList {
			def(v)
		}
		for _, v := range written {
			def(v)
		}
	case awaitStart:
		read(it.call.Args[0], nil, nil)
	case *awaitResume:
		switch {
		case it.try != nil:
			for _, l := range it.try.Lhs {
				_, v := plain(l)
				def(v)
			}
		case it.lhs != nil:
			_, v := plain(it.lhs)
			if it.op != token.DEFINE && it.op != token.ASSIGN {
				use(v) // x op= future.Await(f)
			}
			def(v)
		}
	case branchItem:
		read(it.cond, nil, nil)
	case loopHead:
		read(it.cond, nil, nil)
	case caseTest:
		read(it.tag, nil, nil)
		read(it.expr, nil, nil)
	case switchItem:
		for _, n := range itemNodes(it) {
			read(n, nil, nil)
		}
		if _, ok := it.s.(*ast.TypeSwitchStmt); ok {
			// The dispatch binds each clause's variable.
			_, _, body := switchParts(it.s)
			for _, c := range body.List {
				if v, ok := g.localVar(g.info.Implicits[c]); ok {
					def(v)
				}
			}
		}
	case rangeInit:
		if !it.l.direct {
			read(it.l.x, nil, nil)
		}
		if it.l.keyIdx {
			_, v := plain(it.l.s.Key)
			def(v) // the key is the index: set to 0
		}
	case rangeHead:
		l := it.l
		if l.direct {
			read(l.x, nil, nil)
		}
		if l.keyIdx {
			_, v := plain(l.s.Key)
			use(v) // tested against the length
		}
		for _, e := range []ast.Expr{l.s.Key, l.s.Value} {
			if e == nil || l.keyIdx && e == l.s.Key {
				continue
			}
			if _, v := plain(e); v != nil {
				def(v)
			} else {
				read(e, nil, nil) // a[i], p.x: assigned through what it reads
			}
		}
	case rangeNext:
		if it.l.keyIdx {
			_, v := plain(it.l.s.Key)
			use(v)
			def(v)
		}
	}
	return uses, defs
}

// successors returns the blocks that item it may go on at: the targets of
// its jumps (a copied statement's: of the break and continue statements
// the rewrite makes jumps), and the block that resumes its await.
func (g *gen) successors(it any) []*block {
	switch it := it.(type) {
	case stmtItem:
		return g.branchTargets(it) // more precise than itemTargets' for a copied statement
	case awaitStart:
		return []*block{it.resume}
	}
	return slices.DeleteFunc(g.itemTargets(it), func(b *block) bool { return b == nil }) // a switch without a join
}

// branchTargets returns the blocks that the break and continue statements
// of a copied statement jump to: those that emission's rewrite turns into
// jumps (a labeled one naming a lowered loop or switch; an unlabeled one
// that binds to the lowered loop or switch around the statement), outside
// function literals.
func (g *gen) branchTargets(it stmtItem) []*block {
	var out []*block
	add := func(b *block) {
		if b != nil && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	loops, breaks, lits := 0, 0, 0
	var stack []ast.Node
	ast.Inspect(it.s, func(n ast.Node) bool {
		if n == nil {
			switch stack[len(stack)-1].(type) {
			case *ast.FuncLit:
				lits--
			case *ast.ForStmt, *ast.RangeStmt:
				loops--
				breaks--
			case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				breaks--
			}
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncLit:
			lits++
		case *ast.ForStmt, *ast.RangeStmt:
			loops++
			breaks++
		case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			breaks++
		case *ast.BranchStmt:
			if lits > 0 {
				break
			}
			if n.Label != nil {
				if to, ok := g.labels[n.Label.Name]; ok {
					if n.Tok == token.CONTINUE {
						add(to.cont)
					} else {
						add(to.brk)
					}
				}
			}
			if n.Label == nil && it.lp != nil {
				if n.Tok == token.CONTINUE && loops == 0 && it.lp.cont != nil {
					add(it.lp.cont)
				}
				if n.Tok == token.BREAK && breaks == 0 {
					add(it.lp.brk)
				}
			}
		}
		return true
	})
	return out
}
