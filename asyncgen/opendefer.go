package asyncgen

// Open-coded defers, as the Go compiler open-codes them. When every defer
// statement of the function runs at most once per call (none is in a loop,
// a copied one included) and there are at most 8 of them, the state machine
// holds no list of closures: each defer statement is a site with a bit in a
// field deferBits (uint8, beside state) and fields of fixed types for what
// Go evaluates at the defer statement and the call does not find elsewhere:
//
//   - a method value's receiver (after the embedded fields it is promoted
//     through, with the & or * Go applies), unless it is a variable of the
//     function kept in a field that nothing assigns (then its field is read
//     when the call runs; with &, any variable kept in a field, whose
//     address does not change);
//   - a function value that is not a function or method named statically
//     (a variable, a field, an index, a call's result), under the same
//     exception;
//   - each argument that is not a constant, nil, or such a variable.
//
// The defer statement assigns them and sets its bit; runDefers tests the
// bits from the last site to the first and runs each set bit's call,
// clearing it first. Without loops (and goto, which is rejected) the sites
// execute in source order along every path, so the reverse order of the
// sites is Go's last-first order. A deferred function literal is called in
// place in runDefers, its variables being fields: the variables of the
// function that it names are made fields (forced) so that it can run there.
// A literal that names the variable of a type switch's clause keeps a
// closure in a field of its own (one allocation when the defer statement
// runs), as does a method value promoted through an embedded field that this
// package cannot name.
//
// A deferred call of a static function or method whose arguments are
// constants or such variables therefore costs one bit and no allocation;
// defer s.Close() of a parameter s is f.deferBits |= 1, and f.s.Close() in
// runDefers.
//
// Otherwise (a defer in a loop, or more than 8) the function keeps the
// general form of defer.go: a slice of closures.

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// maxOpenDefers is the most defer statements an open-coded function has:
// the bits of deferBits.
const maxOpenDefers = 8

// deferSite is a defer statement of an open-coded function.
type deferSite struct {
	bit     int    // its bit in deferBits: the sites' order in the source
	line    string // the //line directive of the defer statement
	call    string // the call runDefers makes; "" until the statement is emitted
	closure bool   // a deferred function literal kept as a closure (see the top of this file)
}

// findDeferSites notes the function's defer statements (outside function
// literals) and decides whether they are open-coded; it names the fields and
// methods a function with defers has. Called before lowering.
func (g *gen) findDeferSites() {
	var sites []*ast.DeferStmt
	looped := false
	loops := 0
	var stack []ast.Node
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		if n == nil {
			switch stack[len(stack)-1].(type) {
			case *ast.ForStmt, *ast.RangeStmt:
				loops--
			}
			stack = stack[:len(stack)-1]
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // its defers are its own
		case *ast.ForStmt, *ast.RangeStmt:
			loops++
		case *ast.DeferStmt:
			sites = append(sites, n)
			looped = looped || loops > 0
		}
		stack = append(stack, n)
		return true
	})
	if len(sites) == 0 {
		return
	}
	g.fields["runDefers"] = true
	g.fields["poll"] = true
	g.deferFn = g.fresh("deferred")
	if looped || len(sites) > maxOpenDefers {
		g.defers = freshIn(g.fields, "defers")
		return
	}
	g.defers = freshIn(g.fields, "deferBits")
	g.siteAt = map[token.Pos]*deferSite{}
	for i, d := range sites {
		s := &deferSite{bit: i, line: g.line(d.Pos())}
		g.siteList = append(g.siteList, s)
		g.siteAt[d.Defer] = s
	}
}

// site returns the site of defer statement d (or of the linearizer's copy
// of it, which keeps its position).
func (g *deferForm) site(d *ast.DeferStmt) *deferSite { return g.siteAt[d.Defer] }

// openLiteral prepares the deferred function literal lit of an open-coded
// site to be called in runDefers: the variables of the function it names
// become fields. A literal that names a type switch clause's variable, which
// may be bound by a switch copied as it is, stays a closure.
func (g *gen) openLiteral(d *ast.DeferStmt, lit *ast.FuncLit) {
	var free []*types.Var
	ast.Inspect(lit, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := g.info.Uses[id].(*types.Var); ok && g.ownVar(v) && (v.Pos() < lit.Pos() || v.Pos() >= lit.End()) {
				free = append(free, v)
			}
		}
		return true
	})
	if g.mentionsLocal(lit, lit, true) {
		// A local constant is not in scope in runDefers.
		g.site(d).closure = true
		return
	}
	for _, v := range free {
		for n, obj := range g.info.Implicits {
			if _, clause := n.(*ast.CaseClause); clause && obj == v {
				g.site(d).closure = true
				return
			}
		}
	}
	for _, v := range free {
		g.forced[v] = true
	}
}

// openPlan is how an open-coded site evaluates, decided from the source's
// nodes (and the hoisting) before the rewrite replaces them.
type openPlan struct {
	recv     *recvPlan // a method value's receiver; nil if the call is not one
	fnType   string    // the type of the function value's field, if it has one
	fnDirect bool      // the function value is a variable read in place
	lit      bool      // a function literal called in place
	tuple    bool      // the argument is a call of several results
	argType  []string  // by argument (or by value of a multi-value argument): the type of its field; "" if it has none
	// argDirect: by argument, a variable read in place (its argType is "").
	argDirect []bool
}

// recvPlan is the receiver of a deferred method value.
type recvPlan struct {
	path   string // the embedded fields the method is promoted through: ".A.B"
	op     string // "&" or "*" applied to the receiver, or ""
	typ    string // the type of its field; "" when it is read in place
	method string
	// check: the method value is evaluated at the defer statement, for the
	// nil check Go makes there: of an interface (or a type parameter), or
	// of a pointer from which a promoted method's receiver is reached.
	iface bool
}

// planOpen decides how site d evaluates (see the top of this file). p is
// the general plan of d (planDefer).
func (g *emitter) planOpen(d *ast.DeferStmt, p *deferPlan) *openPlan {
	op := &openPlan{}
	call := d.Call
	fun := ast.Unparen(call.Fun)
	_, isLit := fun.(*ast.FuncLit)
	switch {
	case isLit && !g.site(d).closure:
		op.lit = true
	case isLit:
		op.fnType = g.typeString(g.info.TypeOf(fun))
	case p.evalFn:
		if r := g.planRecv(fun); r != nil {
			op.recv = r
			break
		}
		if v := g.identVar(fun); v != nil && g.stable(v) {
			op.fnDirect = true
			break
		}
		op.fnType = g.typeString(g.info.TypeOf(fun))
	}
	if p.tuple > 0 {
		op.tuple = true
		tu := g.info.TypeOf(call.Args[0]).(*types.Tuple)
		for i := range tu.Len() {
			op.argType = append(op.argType, g.typeString(tu.At(i).Type()))
			op.argDirect = append(op.argDirect, false)
		}
		return op
	}
	for i, a := range call.Args {
		switch {
		case p.args[i] == "" && g.mentionsLocal(a, nil, false):
			// A constant that names something of the function (a local
			// constant, len of a local array), which runDefers cannot:
			// evaluated here, as the parameter's type if it is untyped.
			t := g.info.TypeOf(a)
			if isUntyped(t) {
				t = g.paramType(call, i, t)
			}
			op.argType = append(op.argType, g.typeString(t))
			op.argDirect = append(op.argDirect, false)
		case p.args[i] == "":
			op.argType = append(op.argType, "")
			op.argDirect = append(op.argDirect, false)
		case g.identVar(a) != nil && g.stable(g.identVar(a)):
			op.argType = append(op.argType, "")
			op.argDirect = append(op.argDirect, true)
		case p.args[i] == ":=":
			op.argType = append(op.argType, g.typeString(g.info.TypeOf(a)))
			op.argDirect = append(op.argDirect, false)
		default:
			op.argType = append(op.argType, p.args[i])
			op.argDirect = append(op.argDirect, false)
		}
	}
	return op
}

// planRecv plans the receiver of fun, a method value; nil if fun is not
// one, or is promoted through embedded fields that this package cannot name
// and that hold a pointer or an interface (then the method value itself is
// kept, a closure).
//
// The embedded fields it can name are part of the receiver's expression;
// from the first it cannot name, the method is reached by promotion when
// the call runs, from the receiver kept (a copy of the struct, or its
// address). That is what Go evaluates when the rest of the way holds no
// pointer: the method's receiver is at a fixed place in that struct.
func (g *emitter) planRecv(fun ast.Expr) *recvPlan {
	x, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	sel, ok := g.info.Selections[x]
	if !ok || sel.Kind() != types.MethodVal {
		return nil
	}
	r := &recvPlan{method: x.Sel.Name}
	t := g.info.TypeOf(x.X)
	indirect := false // the receiver's expression reads through a pointer
	idx := sel.Index()
	steps := idx[:len(idx)-1]
	k := 0
	for ; k < len(steps); k++ {
		st, ptr := structOf(t)
		if st == nil {
			return nil
		}
		f := st.Field(steps[k])
		if !f.Exported() && f.Pkg() != g.pkg {
			break
		}
		indirect = indirect || ptr
		r.path += "." + f.Name()
		t = f.Type()
	}
	promoted := k < len(steps) // the rest of the way is taken when the call runs
	if promoted {
		st, _ := structOf(t)
		for _, i := range steps[k:] {
			if st == nil {
				return nil
			}
			ft := st.Field(i).Type()
			if _, isStruct := ft.Underlying().(*types.Struct); !isStruct {
				return nil // a pointer or an interface: read when the call runs
			}
			st = ft.Underlying().(*types.Struct)
		}
	}
	_, ptrT := t.Underlying().(*types.Pointer)
	_, ptrRecv := sel.Obj().Type().(*types.Signature).Recv().Type().(*types.Pointer)
	fieldVar := false // the receiver's root is a variable kept in a field
	v := g.identVar(x.X)
	if v != nil {
		fieldVar = g.inField(v)
	}
	switch {
	case types.IsInterface(t) && !promoted:
		r.iface = true
		r.typ = g.fieldType(t)
	case ptrRecv && !ptrT:
		// Go takes the address: of a field, it never changes.
		r.op = "&"
		r.typ = g.fieldType(types.NewPointer(t))
		if fieldVar && !indirect {
			r.typ = ""
		}
		return r
	case !ptrRecv && ptrT:
		// Go copies the value pointed to.
		r.op = "*"
		r.typ = g.fieldType(t.Underlying().(*types.Pointer).Elem())
		if r.typ == "" {
			return nil
		}
		return r
	default:
		// A pointer from which a promoted method's receiver is reached
		// is dereferenced at the defer statement, in Go: nil panics there.
		r.iface = promoted && ptrT
		r.typ = g.fieldType(t)
	}
	if r.typ == "" {
		return nil
	}
	if v != nil && !indirect && g.stable(v) {
		r.typ = ""
	}
	return r
}

// structOf returns the struct type t is, or points to.
func structOf(t types.Type) (st *types.Struct, ptr bool) {
	if pt, ok := t.Underlying().(*types.Pointer); ok {
		t, ptr = pt.Elem(), true
	}
	st, _ = t.Underlying().(*types.Struct)
	return st, ptr
}

// fieldType prints t for a field of the state machine; "" if this package
// cannot name it (a type of another package that is not exported).
func (g *emitter) fieldType(t types.Type) string {
	base := t
	if pt, ok := t.(*types.Pointer); ok {
		base = pt.Elem()
	}
	if n, ok := base.(*types.Named); ok {
		if obj := n.Obj(); obj.Pkg() != nil && obj.Pkg() != g.pkg && !obj.Exported() {
			return ""
		}
	}
	return g.typeString(t)
}

// mentionsLocal reports whether n names a constant or a variable declared
// in the function (outside skip, and only constants if consts), which
// runDefers, a method of its own, cannot name.
func (g *fnCtx) mentionsLocal(n ast.Node, skip ast.Node, consts bool) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		id, ok := m.(*ast.Ident)
		if !ok || found {
			return !found
		}
		obj := g.info.Uses[id]
		switch obj.(type) {
		case *types.Const:
		case *types.Var:
			if consts {
				return true
			}
		default:
			return true
		}
		if obj.Pos() >= g.fn.Pos() && obj.Pos() < g.fn.End() && (skip == nil || obj.Pos() < skip.Pos() || obj.Pos() >= skip.End()) {
			found = true
		}
		return !found
	})
	return found
}

// paramType is the type of the parameter that argument i of call is
// passed to, or def if there is none to find.
func (g *emitter) paramType(call *ast.CallExpr, i int, def types.Type) types.Type {
	sig, _ := g.info.TypeOf(call.Fun).(*types.Signature)
	t := types.Default(def)
	if sig == nil || sig.Params().Len() == 0 {
		return t
	}
	n := sig.Params().Len()
	if i < n-1 || !sig.Variadic() || call.Ellipsis.IsValid() {
		return sig.Params().At(min(i, n-1)).Type()
	}
	return sig.Params().At(n - 1).Type().(*types.Slice).Elem()
}

// identVar returns the variable that e names, if it is an identifier.
func (g *fnCtx) identVar(e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := g.info.Uses[id].(*types.Var)
	return v
}

// inField reports whether v is kept in a field of its own for the whole
// call: hoisted, not a local of Poll, not a cell, not an awaited local
// sharing its field.
func (k *kept) inField(v *types.Var) bool {
	_, hoisted := k.hoisted[v]
	return hoisted && !k.pollLocal[v] && !k.isCell(v) && !k.shared[v]
}

// stable reports whether v is a variable of the function kept in a field
// that nothing assigns after its declaration (and no return, if it is a
// named result): its field holds, when a deferred call runs, what it held
// at the defer statement. See findStable.
func (k *kept) stable(v *types.Var) bool { return k.stableVars[v] }

// findStable decides stable for every variable kept in a field. Called
// after hoisting and before the rewrite, which changes the function's
// syntax tree.
func (g *gen) findStable() {
	returns := false // a return statement of the function has values
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			returns = returns || len(n.Results) > 0
		}
		return !returns
	})
	named := map[*types.Var]bool{}
	for _, id := range g.named {
		if v, ok := g.info.Defs[id].(*types.Var); ok {
			named[v] = true
		}
	}
	g.stableVars = map[*types.Var]bool{}
	for v := range g.hoisted {
		g.stableVars[v] = g.ownVar(v) && g.inField(v) && !(named[v] && returns) && g.readsOnly(v, g.fn.Body, true)
	}
}

// openDeferText is the Poll code of an open-coded defer statement d, whose
// function and arguments are rewritten already, evaluated as op says; it
// records the call runDefers makes.
func (g *emitter) openDeferText(d *ast.DeferStmt, op *openPlan) string {
	s := g.site(d)
	r := g.recv
	var pre []string
	field := func(suffix, typ string) string {
		name := freshIn(g.fields, "defer"+strconv.Itoa(s.bit+1)+suffix)
		g.deferFields = append(g.deferFields, name+" "+typ+" // evaluated at the defer statement")
		return r + "." + name
	}
	fun := ast.Unparen(d.Call.Fun)
	var fn string
	switch {
	case op.recv != nil:
		sx := fun.(*ast.SelectorExpr)
		x := g.print(sx.X) + op.recv.path
		if op.recv.typ == "" {
			fn = x // read in place (the & is Go's, on a field)
		} else {
			fn = field("Recv", op.recv.typ)
			pre = append(pre, fn+" = "+op.recv.op+x)
		}
		if op.recv.iface {
			// A method value of a nil interface, or promoted through a nil
			// pointer, panics here in Go.
			pre = append(pre, "_ = "+fn+"."+op.recv.method)
		}
		fn += "." + op.recv.method
	case op.lit, op.fnDirect:
		fn = g.print(fun)
	case op.fnType != "":
		fn = field("Fn", op.fnType)
		pre = append(pre, fn+" = "+g.print(fun))
	default:
		fn = g.print(fun) // a function or method named statically, or a builtin
	}
	var args []string
	if op.tuple {
		var lhs []string
		for i, t := range op.argType {
			lhs = append(lhs, field("Arg"+strconv.Itoa(i+1), t))
		}
		pre = append(pre, strings.Join(lhs, ", ")+" = "+g.print(d.Call.Args[0]))
		args = lhs
	} else {
		for i, a := range d.Call.Args {
			if op.argType[i] == "" {
				args = append(args, g.print(a))
				continue
			}
			name := field("Arg"+strconv.Itoa(i+1), op.argType[i])
			pre = append(pre, name+" = "+g.print(a))
			args = append(args, name)
		}
	}
	dots := ""
	if d.Call.Ellipsis.IsValid() {
		dots = "..."
	}
	s.call = fn + "(" + strings.Join(args, ", ") + dots + ")"
	pre = append(pre, r+"."+g.defers+" |= "+strconv.Itoa(1<<s.bit))
	return strings.Join(pre, "\n")
}
