package asyncgen

// Deferred calls. A defer statement evaluates the function and its
// arguments where it stands, as Go does, into temporaries that a closure
// appended to the state machine's defers field captures; runDefers runs
// them last first when the function returns (after its results are
// evaluated), when the future is cancelled (after the future in flight is
// cancelled) and when a panic leaves Poll (then the panic goes on).
//
// recover: Go stops a panic only when recover is called directly by a
// deferred function. The state machine runs the user's deferred calls from
// a function of its own (runDefers, itself run by Poll's deferred function
// on a panic), so a recover in a deferred function literal or in a deferred
// function or concrete method of any package would return nil; those are
// rejected (another package's function is read from its source). A deferred
// call through an interface or a function value cannot be seen through: a
// recover there returns nil.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
)

// checkDefer accepts a defer statement of copied code (not in a function
// literal), or rejects a deferred function whose recover would not work.
func (g *gen) checkDefer(d *ast.DeferStmt) {
	fun := ast.Unparen(d.Call.Fun)
	if lit, ok := fun.(*ast.FuncLit); ok {
		if g.callsRecover(lit.Body) {
			g.reject(d.Pos(), "a deferred function literal that calls recover is not supported in an async function (the state machine runs deferred calls from its own function, so recover would return nil and not stop the panic); write a function that recovers around the code that may panic, called between awaits, instead")
		}
		if g.siteAt != nil {
			g.openLiteral(d, lit)
		}
		return
	}
	fn := g.calledFunc(fun)
	if fn == nil {
		return
	}
	fn = fn.Origin()
	recovers := false
	if fn.Pkg() == g.pkg {
		decl := g.funcDecl(fn)
		recovers = decl != nil && decl.Body != nil && g.callsRecover(decl.Body)
	} else {
		recovers = g.foreignRecovers(fn)
	}
	if recovers {
		name := fn.Name()
		if fn.Pkg() != g.pkg && fn.Pkg() != nil {
			name = fn.Pkg().Name() + "." + name
			if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
				name = types.TypeString(recv.Type(), byName) + "." + fn.Name()
			}
		}
		g.reject(d.Pos(), "a deferred call of %s, which calls recover, is not supported in an async function (the state machine runs deferred calls from its own function, so recover would return nil and not stop the panic); write a function that recovers around the code that may panic, called between awaits, instead", name)
	}
}

// foreignRecovers reports whether fn, a function or concrete method of
// another package, calls recover itself, as far as its source shows: the
// file the type information places it in is parsed (once per run of the
// file) and its body searched. Without a readable source (none is
// shipped), it reports false: Go's own semantics then hold for every
// deferred call but one that recovers, which such a package cannot be
// seen to make.
func (g *gen) foreignRecovers(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	if recv := sig.Recv(); recv != nil && types.IsInterface(recv.Type()) {
		return false // a method of an interface: its implementation is not known here
	}
	pos := g.fset.Position(fn.Pos())
	if pos.Filename == "" {
		return false
	}
	if g.foreign == nil {
		g.foreign = map[string]*ast.File{}
	}
	f, ok := g.foreign[pos.Filename]
	if !ok {
		f, _ = parser.ParseFile(token.NewFileSet(), pos.Filename, nil, parser.SkipObjectResolution)
		g.foreign[pos.Filename] = f // nil if unreadable
	}
	if f == nil {
		return false
	}
	recvName := ""
	if recv := sig.Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			recvName = n.Origin().Obj().Name()
		}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn.Name() || recvTypeName(fd) != recvName || fd.Body == nil {
			continue
		}
		return callsRecoverSyntax(fd.Body)
	}
	return false
}

// callsRecoverSyntax is callsRecover for a body without type information:
// a call of an identifier recover that the file does not declare, which
// is the builtin.
func callsRecoverSyntax(body ast.Node) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && id.Name == "recover" && len(n.Args) == 0 {
				found = true
			}
		}
		return !found
	})
	return found
}

// calledFunc returns the function or method that fun names, if it names
// one statically (a function, a method value or a method expression).
func (g *fnCtx) calledFunc(fun ast.Expr) *types.Func { return staticCallee(g.info, fun) }

// staticCallee is calledFunc with the package's type information: the
// function or method fun names statically, nil if none.
func staticCallee(info *types.Info, fun ast.Expr) *types.Func {
	fun = ast.Unparen(fun)
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	switch x := fun.(type) {
	case *ast.Ident:
		fn, _ := info.Uses[x].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[x]; ok {
			fn, _ := sel.Obj().(*types.Func)
			return fn
		}
		fn, _ := info.Uses[x.Sel].(*types.Func)
		return fn
	}
	return nil
}

// funcDecl finds the declaration of fn among the package's files.
func (g *gen) funcDecl(fn *types.Func) *ast.FuncDecl {
	for _, f := range g.files {
		if f.Pos() > fn.Pos() || fn.Pos() >= f.End() {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Pos() == fn.Pos() {
				return fd
			}
		}
	}
	return nil
}

// callsRecover reports whether body calls recover itself (a function
// literal inside it is another function: its recover returns nil in Go too).
func (g *gen) callsRecover(body ast.Node) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
				if b, ok := g.info.Uses[id].(*types.Builtin); ok && b.Name() == "recover" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// deferPlan is how a defer statement's function and arguments are
// evaluated, decided from the source's types before the rewrite replaces
// its nodes.
type deferPlan struct {
	evalFn bool     // evaluate the function into a temporary (else call it as written)
	args   []string // by argument: "" inline (a constant or nil), ":=" a temporary of the argument's type, else the temporary's type
	tuple  int      // the number of values of a single multi-value argument, else 0
}

// planDefer decides how d evaluates. Called with d's source nodes.
func (g *emitter) planDefer(d *ast.DeferStmt) *deferPlan {
	p := &deferPlan{}
	call := d.Call
	fun := ast.Unparen(call.Fun)
	switch x := fun.(type) {
	case *ast.FuncLit:
		// Evaluating a literal has no effect but capturing variables,
		// which it does by reference either way.
	case *ast.SelectorExpr:
		// A method value binds its receiver at the defer statement; a
		// field of function type is read there, as is a variable of
		// another package (pkg.Var, not a selection).
		if sel, ok := g.info.Selections[x]; ok {
			p.evalFn = sel.Kind() != types.MethodExpr
		} else {
			p.evalFn = g.calledFunc(fun) == nil
		}
	default:
		_, builtin := g.info.Uses[identOf(fun)].(*types.Builtin)
		p.evalFn = !builtin && g.calledFunc(fun) == nil
	}
	if len(call.Args) == 1 {
		if tu, ok := g.info.TypeOf(call.Args[0]).(*types.Tuple); ok {
			p.tuple = tu.Len()
			return p
		}
	}
	sig, _ := g.info.TypeOf(call.Fun).(*types.Signature)
	for i, a := range call.Args {
		tv := g.info.Types[a]
		switch {
		case tv.Value != nil || tv.IsNil():
			p.args = append(p.args, "")
		case untypedDerived(a):
			// A comparison or a shift is untyped until it is passed: its
			// recorded type is the one it gets, which := would not give.
			p.args = append(p.args, g.typeString(tv.Type))
		case isUntyped(tv.Type):
			// An untyped value that is not constant (a comparison, a
			// shift): typed as the parameter it is passed to.
			t := types.Default(tv.Type)
			if sig != nil && sig.Params().Len() > 0 {
				n := sig.Params().Len()
				if i < n-1 || !sig.Variadic() || call.Ellipsis.IsValid() {
					t = sig.Params().At(min(i, n-1)).Type()
				} else {
					t = sig.Params().At(n - 1).Type().(*types.Slice).Elem()
				}
			}
			p.args = append(p.args, g.typeString(t))
		default:
			p.args = append(p.args, ":=")
		}
	}
	return p
}

// untypedDerived reports whether e is an expression that Go types by its
// context when its operands are untyped: a comparison, a logical operation,
// a shift or a negation.
func untypedDerived(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.BinaryExpr:
		switch x.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ, token.LAND, token.LOR, token.SHL, token.SHR:
			return true
		}
	case *ast.UnaryExpr:
		return x.Op == token.NOT
	}
	return false
}

func identOf(e ast.Expr) *ast.Ident {
	id, _ := e.(*ast.Ident)
	return id
}

func isUntyped(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsUntyped != 0
}

// darg returns the name of the temporary of a deferred call's argument i.
func (g *emitter) darg(i int) string {
	for len(g.deferArg) <= i {
		g.deferArg = append(g.deferArg, g.fresh("d"))
	}
	return g.deferArg[i]
}

// deferText is the Poll code of the defer statement d, whose function and
// arguments are rewritten already, evaluated as p says.
func (g *emitter) deferText(d *ast.DeferStmt, p *deferPlan) string {
	var b strings.Builder
	fun := g.print(d.Call.Fun)
	if lit, ok := ast.Unparen(d.Call.Fun).(*ast.FuncLit); ok && len(d.Call.Args) == 0 && lit.Type.Params.NumFields() == 0 && lit.Type.Results.NumFields() == 0 {
		// defer func() { ... }(): the literal is the deferred call.
		return g.recv + "." + g.defers + " = append(" + g.recv + "." + g.defers + ", " + fun + ")"
	}
	b.WriteString("{\n")
	if p.evalFn {
		b.WriteString(g.deferFn + " := " + fun + "\n")
		fun = g.deferFn
	}
	var args []string
	if p.tuple > 0 {
		for i := range p.tuple {
			args = append(args, g.darg(i))
		}
		b.WriteString(strings.Join(args, ", ") + " := " + g.print(d.Call.Args[0]) + "\n")
	} else {
		for i, a := range d.Call.Args {
			switch p.args[i] {
			case "":
				args = append(args, g.print(a))
			case ":=":
				b.WriteString(g.darg(i) + " := " + g.print(a) + "\n")
				args = append(args, g.darg(i))
			default:
				b.WriteString("var " + g.darg(i) + " " + p.args[i] + " = " + g.print(a) + "\n")
				args = append(args, g.darg(i))
			}
		}
	}
	dots := ""
	if d.Call.Ellipsis.IsValid() {
		dots = "..."
	}
	b.WriteString(g.recv + "." + g.defers + " = append(" + g.recv + "." + g.defers + ", func() { " + fun + "(" + strings.Join(args, ", ") + dots + ") })\n}")
	return b.String()
}

// emitDefers writes runDefers and, for Poll, the wrapper that runs the
// deferred calls when a panic leaves it.
func (g *emitter) emitDefers(b *strings.Builder) {
	r := g.recv
	fmt.Fprintf(b, "// runDefers runs the calls that %s deferred, last first. If one panics, the\n// rest still run, as in Go, and the panic goes on.\n", g.fn.Name.Name)
	if g.siteAt != nil {
		// Open-coded: the due sites' calls, from the last site to the first.
		fmt.Fprintf(b, "func (%s *%s) runDefers() {\ndefer func() {\nif %s.%s != 0 {\n%s.runDefers()\n}\n}()\n", r, g.selfType, r, g.defers, r)
		for i := len(g.siteList) - 1; i >= 0; i-- {
			s := g.siteList[i]
			if s.call == "" {
				continue // never emitted: its bit is never set
			}
			bit := 1 << s.bit
			fmt.Fprintf(b, "if %s.%s&%d != 0 {\n%s.%s &^= %d\n%s%s\n%s\n}\n", r, g.defers, bit, r, g.defers, bit, s.line, s.call, linePlace)
		}
		b.WriteString("}\n\n")
		return
	}
	fmt.Fprintf(b, "func (%s *%s) runDefers() {\ndefer func() {\nif len(%s.%s) > 0 {\n%s.runDefers()\n}\n}()\n", r, g.selfType, r, g.defers, r)
	fmt.Fprintf(b, "for len(%s.%s) > 0 {\n%s := %s.%s[len(%s.%s)-1]\n%s.%s = %s.%s[:len(%s.%s)-1]\n%s()\n}\n}\n\n",
		r, g.defers, g.deferFn, r, g.defers, r, g.defers, r, g.defers, r, g.defers, r, g.defers, g.deferFn)
}
