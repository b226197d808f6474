package asyncgen

// Shape and name (passes 3 and 4): the shape of the function's results,
// and the names of what the generated code declares.

import (
	"go/ast"
	"go/types"
	"strings"
)

// typeParams records the type parameters of a generic function, or of a
// method's receiver type, which the state machine's type takes too.
func (g *gen) typeParams() {
	fn, _ := g.info.Defs[g.fn.Name].(*types.Func)
	if fn == nil {
		return
	}
	sig := fn.Type().(*types.Signature)
	tps := sig.TypeParams()
	if g.fn.Recv != nil {
		tps = sig.RecvTypeParams()
	}
	if tps.Len() == 0 {
		return
	}
	var decl, args []string
	for i := range tps.Len() {
		tp := tps.At(i)
		if tp.Obj().Name() == "_" {
			g.reject(g.fn.Pos(), "a blank type parameter is not supported in an async function yet; write a name for it instead")
			return
		}
		decl = append(decl, tp.Obj().Name()+" "+g.typeString(tp.Constraint()))
		args = append(args, tp.Obj().Name())
	}
	g.tparams = "[" + strings.Join(decl, ", ") + "]"
	g.targs = "[" + strings.Join(args, ", ") + "]"
}

func (g *gen) resultShape() {
	res := g.fn.Type.Results
	if res == nil || len(res.List) == 0 {
		g.resType = "struct{}"
		return
	}
	// The results one by one: (a, b int) is one field of two names.
	var rtypes []ast.Expr
	for _, f := range res.List {
		if len(f.Names) == 0 {
			rtypes = append(rtypes, f.Type)
		}
		for _, id := range f.Names {
			rtypes = append(rtypes, f.Type)
			g.named = append(g.named, id)
		}
	}
	switch len(rtypes) {
	case 1:
		g.resKind = 1
		g.resType = g.print(rtypes[0])
		return
	case 2:
		t := g.info.TypeOf(rtypes[1])
		if t != nil && types.Identical(t, types.Universe.Lookup("error").Type()) {
			g.resKind = 2
			g.resType = "future.Result[" + g.print(rtypes[0]) + "]"
			return
		}
	}
	g.reject(res.Pos(), "%s", unsupportedResults)
}

// nameMachine is pass 4: it makes the namespaces, reserving every
// identifier of the function, and names what the generated code declares:
// the receiver and the other identifiers of Poll, the state machine's type
// and constructor, and its type parameters.
func (g *gen) nameMachine() {
	fn := g.fn
	name := fn.Name.Name
	g.names = map[string]bool{"future": true}
	g.fields = map[string]bool{"state": true, "Poll": true, "Cancel": true}
	ast.Inspect(fn, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			g.names[id.Name] = true
		}
		return true
	})
	g.recv = g.fresh("f")
	g.ready = g.fresh("ready")
	g.value = g.fresh("v")
	g.label = g.fresh("poll")
	g.cx = g.fresh("cx")
	g.errName = g.fresh("err")
	g.ctorName = name + "Async"
	g.typeName = machineName(fn)
	g.selfRef = name
	g.typeParams()
	if fn.Recv != nil {
		// A method: its state machine is named after the receiver's type
		// too, and refers to the method by a method expression.
		rt := fn.Recv.List[0].Type
		if _, ptr := ast.Unparen(rt).(*ast.StarExpr); ptr {
			g.selfRef = "(" + g.print(rt) + ")." + name
		} else {
			g.selfRef = g.print(rt) + "." + name
		}
	} else {
		g.selfRef = name + g.targs
	}
	g.selfType = g.typeName + g.targs
}

// machineName is the name of fn's state machine type: fetchAsyncFuture for
// fetch, clientFetchAsyncFuture for a method Fetch of Client.
func machineName(fn *ast.FuncDecl) string {
	name := fn.Name.Name
	if t := recvTypeName(fn); t != "" {
		return strings.ToLower(t[:1]) + t[1:] + strings.ToUpper(name[:1]) + name[1:] + "AsyncFuture"
	}
	return strings.ToLower(name[:1]) + name[1:] + "AsyncFuture"
}

// recvTypeName is the name of the type of fn's receiver, "" for a function.
func recvTypeName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	base := ast.Unparen(fn.Recv.List[0].Type)
	if st, ok := base.(*ast.StarExpr); ok {
		base = st.X
	}
	switch x := base.(type) {
	case *ast.IndexExpr:
		base = x.X
	case *ast.IndexListExpr:
		base = x.X
	}
	if id, ok := base.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// unsupportedResults is the refusal of a result list the generator does not
// take, from the shape pass or, when the package does not type-check, from
// the stubs of the first load (constructorStubs).
const unsupportedResults = "these results are not supported in an async function yet; write one result, (T, error), or a struct instead"
