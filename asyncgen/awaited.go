package asyncgen

// The fields that hold the future an await waits for. Between the block
// that starts an await and the block that resumes it, the future lives in
// a field of the state machine. Three kinds, cheapest first:
//
//   - A local x awaited as future.Await(&x) (the value futures of channels
//     and syncprim are awaited so), used by nothing but its declaration,
//     assignments and that one await, declared in the block that starts
//     the await: x itself becomes a field of its own type T, assigned where
//     x was declared (f.x = e), polled with a static call (f.x.Poll(cx)) and
//     emptied (f.x = T{}) once the await completes or is cancelled
//     (future.Cancel(&f.x)). Without this, storing &x in an interface field
//     moves x to the heap: one allocation per await. Emptying it is safe
//     because a completed or cancelled future holds nothing registered, and
//     nothing reads x after its await. The one await must be its only one:
//     a second await of the same x (say in a loop without a new declaration)
//     would poll the emptied field. Locals of one type share a field,
//     except one assigned besides its declaration (perhaps while another
//     waits in the shared field), which gets a field of its own.
//   - An operand of a concrete pointer type *T: a field of type *T, polled
//     with a static call.
//   - Anything else: a field of the awaited interface type, Future[V].
//
// Fields of one type are shared between awaits, one of which is in flight
// at a time; each is emptied when its await ends, so that the state
// machine keeps nothing it no longer waits for.

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// awaitField returns the field that holds the future call awaits, creating
// it the first time its kind and type come up, and notes the awaited local
// the field stands for, if any (see the top of this file).
func (g *gen) awaitField(call *ast.CallExpr) string {
	arg := call.Args[0]
	var key, typ, zero, base string
	value := false
	if v := g.awaitedLocal(arg); v != nil {
		typ = g.typeString(v.Type())
		key, zero, base, value = "value "+typ, g.zero(v.Type()), v.Name(), true
		if g.addrAssigned[v] {
			// Assigned elsewhere, perhaps while another local of its type
			// waits in the shared field: a field of its own.
			key += " " + strconv.Itoa(int(v.Pos()))
		}
		defer func() { g.awLocals[v] = g.awFields[key] }()
	} else if elem := g.movedFuture(arg); elem != nil {
		typ = g.typeString(elem)
		key, zero, value = "moved "+typ, g.zero(elem), true
		defer func() { g.awMoved[g.awFields[key]] = true }()
	} else if t := g.info.TypeOf(arg); isConcretePointer(t) {
		typ = g.typeString(t)
		key, zero = "pointer "+typ, "nil"
	} else {
		typ = g.typeString(g.awaitedType(call))
		key, zero = "interface "+typ, "nil"
	}
	if field, ok := g.awFields[key]; ok {
		return field
	}
	if base == "" {
		g.awCount++
		base = "aw" + strconv.Itoa(g.awCount)
	}
	if base == "poll" || base == "runDefers" {
		// The methods of a machine with defers, which a defer statement
		// later in the function may call for: never a field's name.
		g.fields[base] = true
	}
	field := freshIn(g.fields, base)
	g.awFields[key] = field
	g.awOrder = append(g.awOrder, key)
	g.awType[field] = typ
	g.awZero[field] = zero
	g.awValue[field] = value
	g.awIface[field] = strings.HasPrefix(key, "interface ")
	return field
}

// movedFuture returns T when arg is a call (not a conversion) whose type
// is *T for a named struct type T whose pointer is future.Movable: a future
// its constructor returns new, that the state machine may hold by value.
func (g *gen) movedFuture(arg ast.Expr) types.Type {
	call, ok := ast.Unparen(arg).(*ast.CallExpr)
	if !ok {
		return nil
	}
	if tv, ok := g.info.Types[call.Fun]; ok && tv.IsType() {
		return nil // a conversion, (*T)(p): not a new future
	}
	p, ok := g.info.TypeOf(call).(*types.Pointer)
	if !ok || !isConcretePointer(p) {
		return nil
	}
	if _, ok := p.Elem().Underlying().(*types.Struct); !ok {
		return nil
	}
	obj, _, _ := types.LookupFieldOrMethod(p, true, nil, "MovableBeforePoll")
	fn, ok := obj.(*types.Func)
	if !ok || fn.Pkg() == nil {
		return nil
	}
	sig := fn.Type().(*types.Signature)
	if sig.Params().Len() != 0 || sig.Results().Len() != 0 {
		return nil
	}
	return p.Elem()
}

// isConcretePointer reports whether t is a pointer to a type that is
// neither an interface nor a type parameter: its methods are known, so a
// field of type t calls Poll statically.
func isConcretePointer(t types.Type) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	if _, tp := p.Elem().(*types.TypeParam); tp {
		return false
	}
	_, iface := p.Elem().Underlying().(*types.Interface)
	return !iface
}

// awaitedLocal returns x when arg is &x and x can be held as a field of
// its own type: x is in addrOnly, and its declaration is an item of the
// current block, which the await about to be lowered ends, so that every
// execution of the await follows an execution of the declaration.
func (g *gen) awaitedLocal(arg ast.Expr) *types.Var {
	u, ok := ast.Unparen(arg).(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return nil
	}
	id, ok := ast.Unparen(u.X).(*ast.Ident)
	if !ok {
		return nil
	}
	v, ok := g.info.Uses[id].(*types.Var)
	if !ok || !g.addrOnly[v] {
		return nil
	}
	for _, it := range g.cur.items {
		if si, ok := it.(stmtItem); ok && g.declares(si.s, v) {
			return v
		}
	}
	return nil
}

// declares reports whether s is a declaration of v: v := e (among others)
// or var v T = e.
func (g *fnCtx) declares(s ast.Stmt, v *types.Var) bool {
	switch s := s.(type) {
	case *ast.AssignStmt:
		if s.Tok != token.DEFINE {
			return false
		}
		for _, l := range s.Lhs {
			if id, ok := l.(*ast.Ident); ok && g.info.Defs[id] == v {
				return true
			}
		}
	case *ast.DeclStmt:
		gd, ok := s.Decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			return false
		}
		for _, spec := range gd.Specs {
			for _, id := range spec.(*ast.ValueSpec).Names {
				if g.info.Defs[id] == v {
					return true
				}
			}
		}
	}
	return false
}

// findAddrOnly finds the locals of the function's body (outside function
// literals) whose only uses are declarations, assignments (=, :=) and
// exactly one await of their address, future.Await(&x) or future.Try(&x).
func (g *gen) findAddrOnly() {
	awaited := map[*ast.Ident]bool{} // the x of each marker call's &x
	assigned := map[*ast.Ident]bool{}
	other := map[*types.Var]bool{}
	assignedVars := map[*types.Var]bool{} // assigned besides their declaration
	count := map[*types.Var]int{}
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			// A literal may run at any time: its uses disqualify.
			ast.Inspect(n, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok {
					if v, ok := g.info.Uses[id].(*types.Var); ok {
						other[v] = true
					}
				}
				return true
			})
			return false
		case *ast.AssignStmt:
			if n.Tok == token.ASSIGN || n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						assigned[id] = true
					}
				}
			}
		case *ast.CallExpr:
			if call, ok := g.isAwait(n); ok && len(call.Args) == 1 {
				if u, ok := ast.Unparen(call.Args[0]).(*ast.UnaryExpr); ok && u.Op == token.AND {
					if id, ok := ast.Unparen(u.X).(*ast.Ident); ok {
						awaited[id] = true
					}
				}
			}
		case *ast.Ident:
			v, ok := g.info.Uses[n].(*types.Var)
			if !ok {
				return true
			}
			switch {
			case awaited[n]:
				count[v]++
			case assigned[n]:
				assignedVars[v] = true
			default:
				other[v] = true
			}
		}
		return true
	})
	g.addrOnly = map[*types.Var]bool{}
	g.addrAssigned = map[*types.Var]bool{}
	for v, k := range count {
		if k != 1 || other[v] || v.IsField() || v.Pkg() != g.pkg {
			continue
		}
		if v.Pos() < g.fn.Body.Pos() || v.Pos() >= g.fn.Body.End() {
			continue // a parameter, a receiver or a named result
		}
		if _, tp := v.Type().(*types.TypeParam); tp {
			continue
		}
		g.addrOnly[v] = true
		g.addrAssigned[v] = assignedVars[v]
	}
}
